"""What the document checks of this folder share: every name found in the sources must be named in
a document, and the names every user meets must be found at all (or the scan is broken)."""


def check(found, is_listed, must_find, document, what):
    """found: name -> where it was found (text); is_listed(name) -> bool. Prints one line per name
    and a summary; returns the exit status (0 when every name is listed)."""
    missing = []
    for name in sorted(found):
        ok = is_listed(name)
        print("%-32s %-8s %s" % (name, "ok" if ok else "MISSING", found[name]))
        if not ok:
            missing.append(name)
    for name in must_find:
        if name not in found:
            print("the scan did not find %s: its patterns no longer match the sources" % name)
            return 1
    if missing:
        print("%s does not name: %s" % (document, ", ".join(missing)))
        return 1
    print("%d %s, all named in %s" % (len(found), what, document))
    return 0
