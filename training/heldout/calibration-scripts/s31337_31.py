class Line:
    def __init__(self, name, price, qty=1):
        self.name = name
        self.price = price
        self.qty = qty

    def cost(self):
        return self.price * self.qty

    def __repr__(self):
        return f"Line({self.name!r}, {self.price!r}, {self.qty!r})"


class Stock:
    def __init__(self):
        self.items = []

    def add(self, item):
        for existing in self.items:
            if existing.name == item.name:
                existing.qty += item.qty
                return existing
        self.items.append(item)
        return item

    def remove(self, name):
        for i, item in enumerate(self.items):
            if item.name == name:
                return self.items.pop(i)
        raise KeyError(name)

    def total(self):
        t = 0
        for item in self.items:
            t += item.cost()
        return t


def parse_line(text):
    if ',' not in text:
        raise ValueError(f"no ',' in {text!r}")
    key, value = text.split(',', 1)
    return key.strip(), int(value)


def load(lines):
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


stock = Stock()
stock.add(Line('rice', 5, 3))
stock.add(Line('lamp', 7, 4))
stock.add(Line('rice', 8, 1))
try:
    removed = stock.remove('apple')
    print(f"removed {removed}")
except KeyError as e:
    print(f"no such item: {e}")
print(round(stock.total(), 2))
names = [item.name for item in stock.items]
print(names)
settings, problems = load(['closed,74', 'blue,86', 'delta,ten'])
print(settings)
for p in problems:
    print(p)
