def mean(scores):
    if not scores:
        raise ValueError("mean of no scores")
    return sum(scores) / len(scores)


def letter(score):
    if score >= 80:
        return 'A'
    elif score >= 61:
        return 'B'
    elif score >= 55:
        return 'C'
    return 'D'


class EmptyError(Exception):
    pass


class Queue:
    def __init__(self, limit=None):
        self.items = []
        self.limit = limit

    def enqueue(self, x):
        if self.limit is not None and len(self.items) >= self.limit:
            raise OverflowError(f"queue is full ({self.limit})")
        self.items.append(x)

    def dequeue(self):
        if not self.items:
            raise EmptyError("dequeue from an empty queue")
        return self.items.pop()

    def is_empty(self):
        return not self.items

    def __repr__(self):
        return f"Queue(items={self.items!r})"


def main():
    scores = {'fay': [44], 'lu': [93], 'ola': [71, 67, 55], 'gus': [94, 82]}
    report = {}
    for name, marks in scores.items():
        try:
            report[name] = letter(mean(marks))
        except ValueError as e:
            print(f"{name}: {e}")
            report[name] = None
    print(report)
    jobs = Queue(4)
    for x in ['beta', 'blue', 'gamma']:
        try:
            jobs.enqueue(x)
        except OverflowError as e:
            print(e)
    done = []
    for _ in range(3):
        try:
            done.append(jobs.dequeue())
        except EmptyError as e:
            print(f"stopped: {e}")
            break
    print(f"{len(done)} done")


if __name__ == "__main__":
    main()
