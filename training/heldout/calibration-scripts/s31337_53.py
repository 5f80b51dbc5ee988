from dataclasses import dataclass


@dataclass
class Pos:
    x: int
    y: int

    def moved(self, dx, dy):
        return Pos(self.x + dx, self.y + dy)

    def dist2(self, other):
        return (self.x - other.x) ** 2 + (self.y - other.y) ** 2


def walk(start, steps):
    here = start
    visited = [here]
    for dx, dy in steps:
        here = here.moved(dx, dy)
        visited.append(here)
    return visited


class Task:
    MOVES = {'todo': ['doing'], 'doing': ['done', 'todo'], 'done': ['doing']}

    def __init__(self, name):
        self.name = name
        self.state = 'todo'
        self.log = []

    def go(self, new):
        if new not in self.MOVES[self.state]:
            raise RuntimeError(f"{self.name}: cannot go from {self.state} to {new}")
        self.log.append((self.state, new))
        self.state = new
        return self

    def __repr__(self):
        return f"Task({self.name!r}, {self.state!r})"


def main():
    origin = Pos(0, 2)
    trail = walk(origin, [(-2, 2), (-1, 3), (0, 0), (3, 3)])
    last = trail[-1]
    print(trail)
    task = Task('red')
    for target in ['todo', 'todo']:
        try:
            task.go(target)
        except RuntimeError as e:
            print(e)
    print(task.log)


if __name__ == "__main__":
    main()
