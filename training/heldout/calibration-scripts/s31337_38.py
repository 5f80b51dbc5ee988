class EmptyError(Exception):
    pass


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
            raise EmptyError("next from an empty pipeline")
        return self.items.pop(0)

    def is_empty(self):
        return not self.items

    def __repr__(self):
        return f"Pipeline({self.items!r})"


def parse_line(text):
    if ',' not in text:
        raise ValueError(f"no ',' in {text!r}")
    key, value = text.split(',', 1)
    return key.strip(), int(value)


def read_config(lines):
    result = {}
    errors = []
    for line in lines:
        try:
            key, value = parse_line(line)
        except ValueError as e:
            errors.append(str(e))
            continue
        result[key] = value
    return result, errors


def main():
    q = Pipeline(5)
    for x in ['blue', 'beta', 'open', 'green']:
        try:
            q.add(x)
        except OverflowError as e:
            print(e)
    done = []
    for _ in range(4):
        try:
            done.append(q.next())
        except EmptyError as e:
            print(f"stopped: {e}")
            break
    print(done, q)
    settings, problems = read_config(['green', 'slow,3', 'south,'])
    print(settings)
    for p in problems:
        print(p)


if __name__ == "__main__":
    main()
