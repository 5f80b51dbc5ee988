from dataclasses import dataclass


class Wallet:
    def __init__(self, owner, balance=0):
        self.owner = owner
        self.balance = balance
        self.history = []

    def put(self, value):
        if value <= 0:
            raise ValueError(f"put: {value} is not positive")
        self.balance += value
        self.history.append(('put', value))
        return self.balance

    def take(self, value):
        if value > self.balance:
            raise ValueError(f"cannot take {value}, only {self.balance} left")
        self.balance -= value
        self.history.append(('take', value))
        return self.balance

    def __repr__(self):
        return f"Wallet(owner={self.owner!r}, balance={self.balance!r})"


def send(src, dst, value):
    src.take(value)
    dst.put(value)
    return src, dst


@dataclass
class Item:
    name: str
    price: float
    qty: int = 1

    def cost(self):
        return self.price * self.qty


class Stock:
    def __init__(self):
        self.items = []

    def add_item(self, item):
        self.items.append(item)
        return item

    def remove_item(self, name):
        for i, item in enumerate(self.items):
            if item.name == name:
                return self.items.pop(i)
        raise KeyError(name)

    def total(self):
        return sum(item.cost() for item in self.items)

    def __repr__(self):
        return f"Stock({self.items})"


def main():
    acct = Wallet('gus', 48)
    pia_acct = Wallet('pia')
    for kind, value in [('take', 15), ('put', 24), ('take', 20)]:
        try:
            if kind == 'put':
                acct.put(value)
            else:
                acct.take(value)
        except Exception as e:
            print(f"skipped {kind} {value}: {e}")
    try:
        send(acct, pia_acct, 18)
    except ValueError as e:
        print(f"transfer refused: {e}")
    print(acct, pia_acct)
    print(f"{acct.owner} has {acct.balance}")
    print(len(acct.history))
    inv = Stock()
    for name, price, qty in [('pen', 1.4, 4), ('jam', 1.76, 4), ('honey', 6.95, 3), ('cup', 7.35, 2)]:
        inv.add_item(Item(name, price, qty))
    inv.add_item(Item('pen', 4.7, 1))
    try:
        removed = inv.remove_item('cup')
        print(f"removed {removed}")
    except KeyError as e:
        print(f"no such item: {e}")
    print(f"total: {inv.total()}")
    names = [item.name for item in inv.items]
    print(names)


if __name__ == "__main__":
    main()
