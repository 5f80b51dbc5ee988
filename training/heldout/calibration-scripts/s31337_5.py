from dataclasses import dataclass


def split_entry(text):
    if ',' not in text:
        raise ValueError(f"no ',' in {text!r}")
    key, value = text.split(',', 1)
    return key.strip(), int(value)


def load(lines):
    result = {}
    errors = []
    for line in lines:
        try:
            key, value = split_entry(line)
        except ValueError as e:
            errors.append(str(e))
            continue
        result[key] = value
    return result, errors


@dataclass
class Point:
    x: int
    y: int

    def moved(self, dx, dy):
        return Point(self.x + dx, self.y + dy)

    def dist2(self, other):
        return (self.x - other.x) ** 2 + (self.y - other.y) ** 2


def route(start, steps):
    here = start
    visited = [here]
    for dx, dy in steps:
        here = here.moved(dx, dy)
        visited.append(here)
    return visited


def main():
    settings, problems = load(['alpha,4.5', 'green,81'])
    print(settings)
    print(f"{len(problems)} bad lines")
    origin = Point(2, 0)
    trail = route(origin, [(2, -1), (-3, -3), (0, -1), (2, -1)])
    last = trail[-1]
    print(len(trail))


if __name__ == "__main__":
    main()
