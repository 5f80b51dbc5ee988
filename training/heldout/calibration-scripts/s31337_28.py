class EmptyError(Exception):
    pass


class Stack:
    def __init__(self, limit=None):
        self.items = []
        self.limit = limit

    def push(self, x):
        if self.limit is not None and len(self.items) >= self.limit:
            raise OverflowError(f"stack is full ({self.limit})")
        self.items.append(x)

    def pop(self):
        if not self.items:
            raise EmptyError("pop from an empty stack")
        return self.items.pop()

    def is_empty(self):
        return not self.items

    def __repr__(self):
        return f"Stack({self.items!r})"


class Vector:
    def __init__(self, x, y):
        self.x = x
        self.y = y

    def __repr__(self):
        return f"Vector({self.x}, {self.y})"

    def moved(self, dx, dy):
        return Vector(self.x + dx, self.y + dy)

    def dist2(self, other):
        return (self.x - other.x) ** 2 + (self.y - other.y) ** 2


def path_length(start, steps):
    here = start
    visited = [here]
    for dx, dy in steps:
        here = here.moved(dx, dy)
        visited.append(here)
    return visited


def main():
    jobs = Stack()
    for x in [7, 7, 5]:
        try:
            jobs.push(x)
        except OverflowError as e:
            print(e)
    done = []
    while not jobs.is_empty():
        done.append(jobs.pop())
    print(done, jobs)
    origin = Vector(0, 2)
    trail = path_length(origin, [(3, -1), (3, -1), (1, -2)])
    far = max(trail, key=lambda p: p.dist2(origin))
    print(len(trail))


main()
