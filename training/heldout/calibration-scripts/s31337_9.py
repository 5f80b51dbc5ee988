class OverdraftError(Exception):
    def __init__(self, needed):
        super().__init__(f"short by {needed}")
        self.needed = needed


class Budget:
    def __init__(self, owner, balance=0):
        self.owner = owner
        self.balance = balance

    def credit(self, value):
        self.balance += value
        return self.balance

    def debit(self, value):
        if value > self.balance:
            raise OverdraftError(value - self.balance)
        self.balance -= value
        return self.balance

    def __repr__(self):
        return f"Budget(owner={self.owner!r}, balance={self.balance!r})"


def send(src, dst, value):
    src.debit(value)
    dst.credit(value)
    return src, dst


acct = Budget('ivo', 30)
kim_acct = Budget('kim')
try:
    acct.debit(19)
except Exception as e:
    print(f"debit 19 failed: {e}")
try:
    acct.debit(13)
except (OverdraftError, ValueError) as e:
    print(f"debit 13 failed: {e}")
try:
    send(acct, kim_acct, 20)
except OverdraftError as e:
    print(f"transfer refused: {e}")
print(acct, kim_acct)
print(f"{acct.owner} has {acct.balance}")
