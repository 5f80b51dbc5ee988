from dataclasses import dataclass


@dataclass
class Item:
    name: str
    price: int
    qty: int = 1

    def cost(self):
        return self.price * self.qty


class Order:
    def __init__(self):
        self.items = []

    def put(self, item):
        self.items.append(item)
        return item

    def drop(self, name):
        for i, item in enumerate(self.items):
            if item.name == name:
                return self.items.pop(i)
        raise KeyError(name)

    def total(self):
        return sum(item.cost() for item in self.items)

    def __len__(self):
        return len(self.items)

    def __repr__(self):
        return f"Order({self.items!r})"


class InsufficientFunds(Exception):
    pass


class Budget:
    def __init__(self, owner, balance=0):
        self.owner = owner
        self.balance = balance
        self.history = []

    def deposit(self, value):
        if value <= 0:
            raise ValueError(f"deposit: {value} is not positive")
        self.balance += value
        self.history.append(('deposit', value))
        return self.balance

    def withdraw(self, value):
        if value > self.balance:
            raise InsufficientFunds(f"cannot withdraw {value}, only {self.balance} left")
        self.balance -= value
        self.history.append(('withdraw', value))
        return self.balance

    def __repr__(self):
        return f"Budget({self.owner}, {self.balance})"


stock = Order()
stock.put(Item('cup', 9, 2))
stock.put(Item('tea', 16))
stock.put(Item('pears', 12, 2))
stock.put(Item('rice', 15, 3))
try:
    removed = stock.drop('tea')
    print(f"removed {removed}")
except KeyError as e:
    print(f"no such item: {e}")
print(stock.items)
names = [item.name for item in stock.items]
print(names)
acct = Budget('ivo', 40)
for kind, value in [('deposit', 19), ('withdraw', -2), ('withdraw', 12), ('deposit', 7), ('withdraw', 31)]:
    try:
        if kind == 'deposit':
            acct.deposit(value)
        else:
            acct.withdraw(value)
    except Exception as e:
        print(f"skipped {kind} {value}: {e}")
print(f"{acct.owner} has {acct.balance}")
print(len(acct.history))
