class Queue:
    def __init__(self, limit=None):
        self.items = []
        self.limit = limit

    def put(self, x):
        if self.limit is not None and len(self.items) >= self.limit:
            raise OverflowError(f"queue is full ({self.limit})")
        self.items.append(x)

    def get(self):
        if not self.items:
            raise IndexError("get from an empty queue")
        return self.items.pop(0)

    def is_empty(self):
        return not self.items

    def __repr__(self):
        return f"Queue({self.items})"


def mean(scores):
    if not scores:
        raise ValueError("mean of no scores")
    return sum(scores) / len(scores)


def letter(score):
    if score >= 84:
        return 'A'
    elif score >= 61:
        return 'B'
    elif score >= 60:
        return 'C'
    return 'D'


work = Queue()
for x in ['fast', 'green', 'blue', 'closed']:
    try:
        work.put(x)
    except OverflowError as e:
        print(e)
done = []
while not work.is_empty():
    done.append(work.get())
print(done, work)
scores = {'max': [75], 'jo': [69]}
report = {}
for name, marks in scores.items():
    try:
        report[name] = letter(mean(marks))
    except ValueError as e:
        print(f"{name}: {e}")
        report[name] = None
print(report)
