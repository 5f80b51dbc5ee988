from dataclasses import dataclass


@dataclass
class Product:
    name: str
    price: int
    qty: int = 1

    def cost(self):
        return self.price * self.qty


class Basket:
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
        return sum(item.cost() for item in self.items)

    def __repr__(self):
        return f"Basket({self.items!r})"


basket = Basket()
basket.add(Product('oats', 10, 4))
basket.add(Product('bread', 10, 4))
basket.add(Product('jam', 14, 2))
basket.add(Product('rice', 19, 4))
basket.add(Product('oats', 13, 3))
try:
    removed = basket.remove('rice')
    print(f"removed {removed}")
except KeyError as e:
    print(f"no such item: {e}")
print(basket)
