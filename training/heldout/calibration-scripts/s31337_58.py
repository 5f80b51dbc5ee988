from dataclasses import dataclass


class Light:
    MOVES = {'off': ['on'], 'on': ['broken', 'off'], 'broken': ['on']}

    def __init__(self, name):
        self.name = name
        self.state = 'off'
        self.log = []

    def go(self, new):
        if new not in self.MOVES[self.state]:
            raise RuntimeError(f"{self.name}: cannot go from {self.state} to {new}")
        self.log.append((self.state, new))
        self.state = new
        return self

    def __repr__(self):
        return f"Light({self.name!r}, {self.state!r})"


@dataclass
class Line:
    name: str
    price: float
    qty: int = 1

    def cost(self):
        return self.price * self.qty


class Cart:
    def __init__(self):
        self.items = []

    def add_item(self, item):
        for existing in self.items:
            if existing.name == item.name:
                existing.qty += item.qty
                return existing
        self.items.append(item)
        return item

    def remove_item(self, name):
        for i, item in enumerate(self.items):
            if item.name == name:
                return self.items.pop(i)
        raise KeyError(name)

    def total(self):
        return sum(item.cost() for item in self.items)

    def __repr__(self):
        return f"Cart(items={self.items!r})"


light = Light('north')
for target in ['on', 'on']:
    try:
        light.go(target)
    except RuntimeError as e:
        print(e)
print(f"{light.name} is {light.state}")
stock = Cart()
for name, price, qty in [('honey', 3.2, 4), ('apple', 7.54, 4), ('yogurt', 5.89, 3), ('jam', 5.0, 4)]:
    stock.add_item(Line(name, price, qty))
stock.add_item(Line('honey', 4.29, 3))
try:
    removed = stock.remove_item('apple')
    print(f"removed {removed}")
except KeyError as e:
    print(f"no such item: {e}")
print(stock.items)
names = [item.name for item in stock.items]
print(names)
