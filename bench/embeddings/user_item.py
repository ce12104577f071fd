"""A featureless user-item interaction graph as typed CSV edge lists (docs/formats.md), the shape
of a recommender's first dataset: USERS users and ITEMS items, both in COMMUNITIES taste groups;
each user rates PER_USER distinct items, 80% of them from its own group, items drawn by a Zipf
popularity (s = 0.8) within the group. Neither type has features: a link model must learn them.

    .venv/bin/python bench/embeddings/user_item.py OUT [--users 3000 --items 2000 --per-user 8]
    build/directgnn convert OUT OUT.ds --add-inverse-edges
"""
import argparse
import os

import numpy as np


def main():
    p = argparse.ArgumentParser()
    p.add_argument("out")
    p.add_argument("--users", type=int, default=3000)
    p.add_argument("--items", type=int, default=2000)
    p.add_argument("--per-user", type=int, default=8)
    p.add_argument("--communities", type=int, default=10)
    p.add_argument("--own", type=float, default=0.8)
    p.add_argument("--seed", type=int, default=0)
    a = p.parse_args()
    rng = np.random.default_rng(a.seed)
    user_group = rng.integers(0, a.communities, a.users)
    item_group = rng.integers(0, a.communities, a.items)
    members = [np.flatnonzero(item_group == c) for c in range(a.communities)]
    weights = [(np.arange(len(m)) + 1.0) ** -0.8 for m in members]
    weights = [w / w.sum() for w in weights]
    edges = []
    for u in range(a.users):
        chosen = set()
        while len(chosen) < a.per_user:
            own = rng.random() < a.own
            c = user_group[u] if own else rng.integers(0, a.communities)
            chosen.add(int(rng.choice(members[c], p=weights[c])))
        edges += [(u, i) for i in sorted(chosen)]
    os.makedirs(a.out, exist_ok=False)
    with open(os.path.join(a.out, "nodes.csv"), "w") as f:
        f.write(f"type,count\nuser,{a.users}\nitem,{a.items}\n")
    np.savetxt(os.path.join(a.out, "user___rates___item.csv"), np.array(edges), fmt="%d",
               delimiter=",", header="user,item", comments="")
    print(f"{a.out}: {a.users} users, {a.items} items, {len(edges)} ratings")


if __name__ == "__main__":
    main()
