from dataclasses import dataclass


@dataclass
class Pos:
    x: int
    y: int

    def moved(self, dx, dy):
        return Pos(self.x + dx, self.y + dy)

    def dist2(self, other):
        return (self.x - other.x) ** 2 + (self.y - other.y) ** 2


def path_length(start, steps):
    here = start
    visited = [here]
    for dx, dy in steps:
        here = here.moved(dx, dy)
        visited.append(here)
    return visited


class Pipeline:
    def __init__(self, limit=None):
        self.items = []
        self.limit = limit

    def add(self, x):
        if self.limit is not None and len(self.items) >= self.limit:
            raise OverflowError(f"pipeline is full ({self.limit})")
        self.items.append(x)

    def next(self):
        if not self.items:
            raise IndexError("next from an empty pipeline")
        return self.items.pop(0)

    def is_empty(self):
        return not self.items

    def __repr__(self):
        return f"Pipeline({self.items!r})"


origin = Pos(0, 0)
trail = path_length(origin, [(1, 2), (3, 1), (1, -2)])
last = trail[-1]
print(len(trail))
jobs = Pipeline()
for x in [5, 7, 3]:
    try:
        jobs.add(x)
    except OverflowError as e:
        print(e)
done = []
for _ in range(4):
    try:
        done.append(jobs.next())
    except IndexError as e:
        print(f"stopped: {e}")
        break
print(done)
