class Line:
    def __init__(self, name, price, qty=1):
        self.name = name
        self.price = price
        self.qty = qty

    def cost(self):
        return self.price * self.qty

    def __repr__(self):
        return f"Line({self.name}, {self.price}, {self.qty})"


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

    def __len__(self):
        return len(self.items)

    def __repr__(self):
        return f"Stock({self.items!r})"


cart = Stock()
for name, price, qty in [('pears', 12, 3), ('lamp', 9, 3)]:
    cart.add(Line(name, price, qty))
cart.add(Line('pears', 13, 3))
try:
    removed = cart.remove('pears')
    print(f"removed {removed}")
except KeyError as e:
    print(f"no such item: {e}")
print(cart)
