class InsufficientFunds(Exception):
    def __init__(self, needed):
        super().__init__(f"short by {needed}")
        self.needed = needed


class Account:
    def __init__(self, owner, funds=0):
        self.owner = owner
        self.funds = funds
        self.history = []

    def add(self, value):
        if value <= 0:
            raise ValueError(f"add: {value} is not positive")
        self.funds += value
        self.history.append(('add', value))
        return self.funds

    def spend(self, value):
        if value > self.funds:
            raise InsufficientFunds(value - self.funds)
        self.funds -= value
        self.history.append(('spend', value))
        return self.funds

    def __repr__(self):
        return f"Account({self.owner!r}, {self.funds!r})"


def move(src, dst, value):
    src.spend(value)
    dst.add(value)
    return src, dst


class Pipeline:
    def __init__(self, limit=None):
        self.items = []
        self.limit = limit

    def put(self, x):
        if self.limit is not None and len(self.items) >= self.limit:
            raise OverflowError(f"pipeline is full ({self.limit})")
        self.items.append(x)

    def get(self):
        if not self.items:
            raise IndexError("get from an empty pipeline")
        return self.items.pop(0)

    def is_empty(self):
        return not self.items

    def __repr__(self):
        return f"Pipeline(items={self.items!r})"


acct = Account('noa', 11)
max_acct = Account('max')
try:
    acct.spend(9)
except (InsufficientFunds, ValueError) as e:
    print(f"spend 9 failed: {e}")
try:
    acct.add(4)
except (InsufficientFunds, ValueError) as e:
    print(f"add 4 failed: {e}")
try:
    acct.add(-28)
except (InsufficientFunds, ValueError) as e:
    print(f"add -28 failed: {e}")
try:
    move(acct, max_acct, 22)
except InsufficientFunds as e:
    print(f"transfer refused: {e}")
print(acct, max_acct)
print(f"{acct.owner} has {acct.funds}")
q = Pipeline(4)
for x in ['north', 'fast', 'blue', 'closed']:
    try:
        q.put(x)
    except OverflowError as e:
        print(e)
done = []
while not q.is_empty():
    done.append(q.get())
print(f"{len(done)} done")
