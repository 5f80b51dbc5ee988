def mean(scores):
    if not scores:
        raise ValueError("mean of no scores")
    return sum(scores) / len(scores)


def letter(score):
    if score >= 94:
        return 'A'
    elif score >= 79:
        return 'B'
    elif score >= 69:
        return 'C'
    return 'D'


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
        return f"Order({self.name}, {self.state})"


scores = {'ada': [78], 'pia': [60, 56], 'jo': [75, 85, 91], 'bo': [47, 71, 63]}
report = {}
for name, marks in scores.items():
    try:
        report[name] = letter(mean(marks))
    except ValueError as e:
        print(f"{name}: {e}")
        report[name] = None
print(report)
order = Order('blue')
for target in ['shipped', 'shipped', 'new', 'paid']:
    try:
        order.go(target)
    except RuntimeError as e:
        print(e)
print(f"{order.name} is {order.state}")
