class EmptyError(Exception):
    pass


class Stack:
    def __init__(self, limit=None):
        self.items = []
        self.limit = limit

    def add(self, x):
        if self.limit is not None and len(self.items) >= self.limit:
            raise OverflowError(f"stack is full ({self.limit})")
        self.items.append(x)

    def next(self):
        if not self.items:
            raise EmptyError("next from an empty stack")
        return self.items.pop()

    def is_empty(self):
        return not self.items

    def __repr__(self):
        return f"Stack(items={self.items!r})"


def main():
    tasks = Stack()
    for x in [6, 6, 7]:
        try:
            tasks.add(x)
        except OverflowError as e:
            print(e)
    done = []
    while not tasks.is_empty():
        done.append(tasks.next())
    print(f"{len(done)} done")


if __name__ == "__main__":
    main()
