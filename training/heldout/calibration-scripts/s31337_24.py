class Line:
    def __init__(self, name, price, qty=1):
        self.name = name
        self.price = price
        self.qty = qty

    def cost(self):
        return self.price * self.qty

    def __repr__(self):
        return f"Line({self.name}, {self.price}, {self.qty})"


class Inventory:
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
        return sum(item.cost() for item in self.items)

    def __repr__(self):
        return f"Inventory(items={self.items!r})"


def main():
    basket = Inventory()
    basket.add(Line('lamp', 6.86))
    basket.add(Line('jam', 2.2, 4))
    basket.add(Line('flour', 2.4, 2))
    try:
        removed = basket.remove('rice')
        print(f"removed {removed}")
    except KeyError as e:
        print(f"no such item: {e}")
    print(round(basket.total(), 2))


main()
