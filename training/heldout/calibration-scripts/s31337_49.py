class Account:
    def __init__(self, owner, balance=0):
        self.owner = owner
        self.balance = balance

    def put(self, value):
        self.balance += value
        return self.balance

    def take(self, value):
        if value > self.balance:
            raise ValueError(f"cannot take {value}, only {self.balance} left")
        self.balance -= value
        return self.balance


class Order:
    MOVES = {'new': ['paid'], 'paid': ['shipped', 'new'], 'shipped': []}

    def __init__(self, name):
        self.name = name
        self.state = 'new'
        self.log = []

    def go(self, new):
        if new not in self.MOVES[self.state]:
            raise RuntimeError(f"{self.name}: cannot go from {self.state} to {new}")
        self.log.append((self.state, new))
        self.state = new
        return self

    def __repr__(self):
        return f"Order({self.name!r}, {self.state!r})"


def main():
    acct = Account('hana', 32)
    try:
        acct.take(28)
    except ValueError as e:
        print(f"take 28 failed: {e}")
    try:
        acct.put(12)
    except Exception as e:
        print(f"put 12 failed: {e}")
    print(f"{acct.owner} has {acct.balance}")
    order = Order('fast')
    for target in ['shipped', 'new', 'paid', 'paid']:
        try:
            order.go(target)
        except RuntimeError as e:
            print(e)
    print(f"{order.name} is {order.state}")


if __name__ == "__main__":
    main()
