def split_entry(text):
    if ',' not in text:
        raise ValueError(f"no ',' in {text!r}")
    key, value = text.split(',', 1)
    return key.strip(), int(value)


def parse_all(lines):
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


class Order:
    MOVES = {'new': ['paid'], 'paid': ['shipped', 'new'], 'shipped': []}

    def __init__(self, name):
        self.name = name
        self.state = 'new'
        self.log = []

    def go(self, new):
        if new not in self.MOVES[self.state]:
            raise RuntimeError(f"{self.name}: cannot go from {self.state} to {new}")
        self.log.append((self.state, new))
        self.state = new
        return self

    def __repr__(self):
        return f"Order({self.name!r}, {self.state!r})"


settings, problems = parse_all(['blue', 'fast,86', 'slow,28', 'beta,ten'])
print(settings)
print(f"{len(problems)} bad lines")
order = Order('green')
for target in ['shipped', 'new']:
    try:
        order.go(target)
    except RuntimeError as e:
        print(e)
print(order)
