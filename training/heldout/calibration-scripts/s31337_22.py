class Point:
    def __init__(self, x, y):
        self.x = x
        self.y = y

    def __repr__(self):
        return f"Point(x={self.x!r}, y={self.y!r})"

    def moved(self, dx, dy):
        return Point(self.x + dx, self.y + dy)

    def dist2(self, other):
        return (self.x - other.x) ** 2 + (self.y - other.y) ** 2


def path_length(start, steps):
    here = start
    visited = [here]
    for dx, dy in steps:
        here = here.moved(dx, dy)
        visited.append(here)
    return visited


def split_entry(text):
    if '=' not in text:
        raise ValueError(f"no '=' in {text!r}")
    key, value = text.split('=', 1)
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


def main():
    origin = Point(2, 1)
    trail = path_length(origin, [(0, 0), (0, -3), (-3, 2)])
    far = max(trail, key=lambda p: p.dist2(origin))
    print(trail)
    settings, problems = load(['fast=44', 'green=52'])
    print(settings)
    print(f"{len(problems)} bad lines")


if __name__ == "__main__":
    main()
