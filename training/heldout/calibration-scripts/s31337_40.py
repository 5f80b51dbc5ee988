class Budget:
    def __init__(self, owner, amount=0):
        self.owner = owner
        self.amount = amount

    def add(self, value):
        self.amount += value
        return self.amount

    def spend(self, value):
        if value > self.amount:
            raise ValueError(f"cannot spend {value}, only {self.amount} left")
        self.amount -= value
        return self.amount

    def __repr__(self):
        return f"Budget({self.owner!r}, {self.amount!r})"


def transfer(src, dst, value):
    src.spend(value)
    dst.add(value)
    return src, dst


eli_acct = Budget('eli', 30)
pia_acct = Budget('pia')
try:
    eli_acct.add(16)
except Exception as e:
    print(f"add 16 failed: {e}")
try:
    eli_acct.spend(-18)
except ValueError as e:
    print(f"spend -18 failed: {e}")
try:
    transfer(eli_acct, pia_acct, 16)
except ValueError as e:
    print(f"transfer refused: {e}")
print(eli_acct, pia_acct)
print(f"{eli_acct.owner} has {eli_acct.amount}")
