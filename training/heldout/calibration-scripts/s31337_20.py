class Entry:
    def __init__(self, name, price, qty=1):
        self.name = name
        self.price = price
        self.qty = qty

    def cost(self):
        return self.price * self.qty

    def __repr__(self):
        return f"Entry({self.name}, {self.price}, {self.qty})"


class Inventory:
    def __init__(self):
        self.items = []

    def add_item(self, item):
        self.items.append(item)
        return item

    def remove_item(self, name):
        for i, item in enumerate(self.items):
            if item.name == name:
                return self.items.pop(i)
        raise KeyError(name)

    def total(self):
        return sum(item.cost() for item in self.items)

    def __len__(self):
        return len(self.items)

    def __repr__(self):
        return f"Inventory({self.items!r})"


def split_entry(text):
    if ':' not in text:
        raise ValueError(f"no ':' in {text!r}")
    key, value = text.split(':', 1)
    return key.strip(), int(value)


def read_config(lines):
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


basket = Inventory()
for name, price, qty in [('salt', 7.01, 4), ('tea', 1.56, 3)]:
    basket.add_item(Entry(name, price, qty))
try:
    removed = basket.remove_item('salt')
    print(f"removed {removed}")
except KeyError as e:
    print(f"no such item: {e}")
print(f"total: {basket.total()}")
settings, problems = read_config(['slow', 'red'])
print(settings)
for p in problems:
    print(p)
