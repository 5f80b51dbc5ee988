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

    def put(self, item):
        self.items.append(item)
        return item

    def drop(self, name):
        for i, item in enumerate(self.items):
            if item.name == name:
                return self.items.pop(i)
        raise KeyError(name)

    def total(self):
        return sum(item.cost() for item in self.items)

    def __repr__(self):
        return f"Inventory(items={self.items!r})"


inv = Inventory()
for name, price, qty in [('yogurt', 11, 1), ('nuts', 16, 4), ('eggs', 1, 2), ('honey', 3, 1)]:
    inv.put(Entry(name, price, qty))
try:
    removed = inv.drop('honey')
    print(f"removed {removed}")
except KeyError as e:
    print(f"no such item: {e}")
print(round(inv.total(), 2))
