class InsufficientFunds(Exception):
    pass


class Wallet:
    def __init__(self, owner, amount=0):
        self.owner = owner
        self.amount = amount

    def put(self, value):
        self.amount += value
        return self.amount

    def take(self, value):
        if value > self.amount:
            raise InsufficientFunds(f"cannot take {value}, only {self.amount} left")
        self.amount -= value
        return self.amount

    def __repr__(self):
        return f"Wallet(owner={self.owner!r}, amount={self.amount!r})"


def transfer(src, dst, value):
    src.take(value)
    dst.put(value)
    return src, dst


pia_acct = Wallet('pia', 35)
max_acct = Wallet('max')
try:
    pia_acct.take(38)
except Exception as e:
    print(f"take 38 failed: {e}")
try:
    pia_acct.put(38)
except (InsufficientFunds, ValueError) as e:
    print(f"put 38 failed: {e}")
try:
    pia_acct.take(11)
except Exception as e:
    print(f"take 11 failed: {e}")
try:
    transfer(pia_acct, max_acct, 2)
except InsufficientFunds as e:
    print(f"transfer refused: {e}")
print(pia_acct, max_acct)
print(f"{pia_acct.owner} has {pia_acct.amount}")
