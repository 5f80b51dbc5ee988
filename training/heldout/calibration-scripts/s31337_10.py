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
        return f"Order(name={self.name!r}, state={self.state!r})"


order = Order('green')
for target in ['new', 'paid']:
    try:
        order.go(target)
    except RuntimeError as e:
        print(e)
print(order)
