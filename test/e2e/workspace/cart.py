class Cart:
    def __init__(self, owner):
        self.owner = owner
        self.items = []

    def add(self, name, price, qty=1):
        self.items.append((name, price, qty))

    def total(self):
        return sum(price * qty for _, price, qty in self.items)

    def discount(self, total):
        """10% off above 15, rounded down: not written yet."""
        ...


cart = Cart("ana")
cart.add("tea", 4, 2)
cart.add("cake", 8)
total = cart.total()
final = total - cart.discount(total)
print("to pay:", final)
