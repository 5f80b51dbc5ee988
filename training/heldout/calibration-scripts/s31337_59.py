from dataclasses import dataclass


def parse_pair(text):
    if ',' not in text:
        raise ValueError(f"no ',' in {text!r}")
    key, value = text.split(',', 1)
    return key.strip(), int(value)


def parse_all(lines):
    result = {}
    errors = []
    for line in lines:
        try:
            key, value = parse_pair(line)
        except ValueError as e:
            errors.append(str(e))
            continue
        result[key] = value
    return result, errors


@dataclass
class Item:
    name: str
    price: float
    qty: int = 1


class Order:
    def __init__(self):
        self.items = []

    def add(self, item):
        self.items.append(item)
        return item

    def remove(self, name):
        for i, item in enumerate(self.items):
            if item.name == name:
                return self.items.pop(i)
        raise KeyError(name)

    def total(self):
        return sum(item.price * item.qty for item in self.items)

    def __len__(self):
        return len(self.items)

    def __repr__(self):
        return f"Order({self.items!r})"


settings, problems = parse_all(['delta,x', 'open,56'])
print(settings)
for p in problems:
    print(p)
cart = Order()
for name, price, qty in [('nuts', 3.07, 1), ('milk', 1.65, 4)]:
    cart.add(Item(name, price, qty))
try:
    removed = cart.remove('nuts')
    print(f"removed {removed}")
except KeyError as e:
    print(f"no such item: {e}")
print(cart)
names = [item.name for item in cart.items]
print(names)
