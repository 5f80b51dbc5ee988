def mean(scores):
    if not scores:
        raise ValueError("mean of no scores")
    return sum(scores) / len(scores)


def letter(score):
    if score >= 85:
        return 'A'
    elif score >= 84:
        return 'B'
    elif score >= 65:
        return 'C'
    return 'D'


class Queue:
    def __init__(self, limit=None):
        self.items = []
        self.limit = limit

    def push(self, x):
        if self.limit is not None and len(self.items) >= self.limit:
            raise OverflowError(f"queue is full ({self.limit})")
        self.items.append(x)

    def pop(self):
        if not self.items:
            raise IndexError("pop from an empty queue")
        return self.items.pop(0)

    def is_empty(self):
        return not self.items

    def __repr__(self):
        return f"Queue({self.items!r})"


scores = {'dee': [], 'eli': [74, 95, 51], 'kim': [57]}
report = {}
for name, marks in scores.items():
    try:
        report[name] = letter(mean(marks))
    except ValueError as e:
        print(f"{name}: {e}")
        report[name] = None
print(report)
q = Queue()
for x in ['north', 'gamma', 'red', 'delta']:
    try:
        q.push(x)
    except OverflowError as e:
        print(e)
done = []
while not q.is_empty():
    done.append(q.pop())
print(done)
