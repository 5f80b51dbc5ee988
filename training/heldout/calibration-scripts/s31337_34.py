class EmptyError(Exception):
    pass


class Queue:
    def __init__(self, limit=None):
        self.items = []
        self.limit = limit

    def add(self, x):
        if self.limit is not None and len(self.items) >= self.limit:
            raise OverflowError(f"queue is full ({self.limit})")
        self.items.append(x)

    def next(self):
        if not self.items:
            raise EmptyError("next from an empty queue")
        return self.items.pop()

    def is_empty(self):
        return not self.items

    def __repr__(self):
        return f"Queue({self.items!r})"


q = Queue()
for x in [6, 2, 3, 2]:
    try:
        q.add(x)
    except OverflowError as e:
        print(e)
done = []
while not q.is_empty():
    done.append(q.next())
print(f"{len(done)} done")
