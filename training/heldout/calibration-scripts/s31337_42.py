def read_setting(text):
    if ':' not in text:
        raise ValueError(f"no ':' in {text!r}")
    key, value = text.split(':', 1)
    return key.strip(), int(value)


def read_config(lines):
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


settings, problems = read_config(['closed', 'beta:63', 'south:38', 'north:8'])
print(settings)
for p in problems:
    print(p)
