class Item:
    def __init__(self, name, price, qty=1):
        self.name = name
        self.price = price
        self.qty = qty

    def cost(self):
        return self.price * self.qty

    def __repr__(self):
        return f"Item({self.name}, {self.price}, {self.qty})"


class Cart:
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
        t = 0
        for item in self.items:
            t += item.cost()
        return t

    def __len__(self):
        return len(self.items)

    def __repr__(self):
        return f"Cart({self.items!r})"


basket = Cart()
basket.add(Item('oats', 19, 3))
basket.add(Item('cheese', 17, 2))
basket.add(Item('lemon', 5))
basket.add(Item('milk', 1, 4))
try:
    removed = basket.remove('yogurt')
    print(f"removed {removed}")
except KeyError as e:
    print(f"no such item: {e}")
print(basket.items)
