def read_setting(text):
    if '=' not in text:
        raise ValueError(f"no '=' in {text!r}")
    key, value = text.split('=', 1)
    return key.strip(), int(value)


def parse_all(lines):
    result = {}
    errors = []
    for line in lines:
        try:
            key, value = read_setting(line)
        except ValueError as e:
            errors.append(str(e))
            continue
        result[key] = value
    return result, errors


def main():
    settings, problems = parse_all(['south=5', 'delta=50'])
    print(settings)
    print(f"{len(problems)} bad lines")


main()
