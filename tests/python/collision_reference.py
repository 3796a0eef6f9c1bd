"""The brute-force reference of the collision check (tests/collision_reference.rs).

Reads a scene (JSON: each link's collision shapes as the URDF gives them,
the obstacles, the floor, the pairs the check measures) and the links'
poses in many configurations (raw float64: per configuration and link a
3x3 rotation, row-major, and a translation), and writes, per configuration,
the smallest signed distance over those pairs and the pair, as FCL (MoveIt's
checker, python-fcl) measures it on the convex hulls trimesh (qhull) makes
of the same mesh files. Nothing here comes from arm_ik but the scene's
description and the poses.

Between two hulls FCL's answer is certified, not trusted: FCL 0.7's GJK
on large convex hulls can stop early (SO-101's shoulder against its lower
arm: 102.7 mm as fcl.Convex where the exact distance between the same
hulls' triangles is 93.4 mm). FCL's nearest points give an upper bound;
the hulls' vertices projected on the line through them give a lower bound
(a separating axis); when the two differ by more than a micrometre, FCL's
exact distance between the hulls' triangles (a BVH model, milliseconds) is
taken instead. Two solids whose surfaces do not cross may still overlap
when one holds the other, so a verdict of contact also asks whether a point
of either lies inside the other. The solids' bounding balls order the pairs
and rule out those that cannot come closer than the nearest found so far
(the minimum stays exact).

    python collision_reference.py SCENE.json POSES.bin OUT.json
"""

import json
import sys

import fcl
import numpy as np
import trimesh


def rotation_z_to(v):
    """A rotation taking +z onto the direction of v."""
    z = np.array([0.0, 0.0, 1.0])
    v = v / np.linalg.norm(v)
    c = float(np.dot(z, v))
    if c > 1.0 - 1e-12:
        return np.eye(3)
    if c < -1.0 + 1e-12:
        return np.diag([1.0, -1.0, -1.0])
    axis = np.cross(z, v)
    s = np.linalg.norm(axis)
    k = axis / s
    kx = np.array([[0, -k[2], k[1]], [k[2], 0, -k[0]], [-k[1], k[0], 0]])
    return np.eye(3) + s * kx + (1 - c) * kx @ kx


class Shape:
    """One convex solid placed in its owner's frame: an FCL geometry, and the
    points whose lowest is its lowest point (or a radius to take off)."""

    def __init__(self, d):
        place = np.array(d["place"], dtype=float).reshape(4, 4)
        self.rot, self.pos = place[:3, :3], place[:3, 3]
        kind = d["shape"]
        self.round = 0.0
        if kind == "box":
            sx, sy, sz = d["size"]
            self.geom = fcl.Box(sx, sy, sz)
            self.points = np.array(
                [[x, y, z] for x in (-sx / 2, sx / 2) for y in (-sy / 2, sy / 2) for z in (-sz / 2, sz / 2)]
            )
        elif kind == "sphere":
            self.geom = fcl.Sphere(d["radius"])
            self.points, self.round = np.zeros((1, 3)), d["radius"]
        elif kind == "cylinder":
            r, h = d["radius"], d["length"]
            self.geom = fcl.Cylinder(r, h)
            a = np.linspace(0, 2 * np.pi, 720, endpoint=False)
            ring = np.stack([r * np.cos(a), r * np.sin(a), np.zeros_like(a)], 1)
            self.points = np.concatenate([ring + [0, 0, -h / 2], ring + [0, 0, h / 2]])
        elif kind == "capsule":
            a, b, r = np.array(d["a"]), np.array(d["b"]), d["radius"]
            length = float(np.linalg.norm(b - a))
            turn = rotation_z_to(b - a) if length > 0 else np.eye(3)
            self.pos = self.pos + self.rot @ ((a + b) / 2)
            self.rot = self.rot @ turn
            self.geom = fcl.Capsule(r, length)
            self.points = np.array([[0, 0, -length / 2], [0, 0, length / 2]])
            self.round = r
        elif kind == "mesh":
            mesh = trimesh.load(d["file"], force="mesh")
            mesh.apply_scale(d["scale"])
            hull = mesh.convex_hull
            v = np.asarray(hull.vertices, dtype=float)
            f = np.asarray(hull.faces, dtype=np.int64)
            self.geom = fcl.BVHModel()
            self.geom.beginModel(len(v), len(f))
            self.geom.addSubModel(v, f)
            self.geom.endModel()
            faces = np.concatenate([np.full((len(f), 1), 3), f], 1).flatten()
            self.convex = fcl.CollisionObject(fcl.Convex(v, len(f), faces), fcl.Transform())
            self.points = v
            normals = np.asarray(hull.face_normals, dtype=float)
            self.planes = (normals, np.einsum("ij,ij->i", normals, v[f[:, 0]]))
        else:
            raise ValueError(f"unknown shape {kind}")
        self.kind = kind
        self.size = d
        if kind != "mesh":
            self.convex = None
        low, high = self.points.min(0), self.points.max(0)
        self.centre = (low + high) / 2
        self.radius = float(np.linalg.norm(self.points - self.centre, axis=1).max()) + self.round
        self.obj = fcl.CollisionObject(self.geom, fcl.Transform())

    def place_at(self, rot, pos):
        r = rot @ self.rot
        p = rot @ self.pos + pos
        self.obj.setRotation(r)
        self.obj.setTranslation(p)
        if self.convex is not None:
            self.convex.setRotation(r)
            self.convex.setTranslation(p)
        self.world_rot, self.world_pos = r, p

    def ball(self):
        """The bounding ball's centre in the world, and its radius."""
        return self.world_rot @ self.centre + self.world_pos, self.radius

    def extent(self, n):
        """The smallest and largest of n . x over a hull's points x (world)."""
        z = self.points @ (self.world_rot.T @ n) + float(n @ self.world_pos)
        return float(z.min()), float(z.max())

    def anchor(self):
        """A point of the solid, in the world."""
        local = self.points[0] if self.kind == "mesh" else np.zeros(3)
        return self.world_rot @ local + self.world_pos

    def contains(self, p):
        """Whether the world point p lies in the solid."""
        x = self.world_rot.T @ (p - self.world_pos)
        d = self.size
        if self.kind == "mesh":
            normals, offsets = self.planes
            return bool(np.all(normals @ x <= offsets + 1e-12))
        if self.kind == "box":
            return bool(np.all(np.abs(x) <= np.array(d["size"]) / 2))
        if self.kind == "sphere":
            return bool(np.linalg.norm(x) <= d["radius"])
        if self.kind == "cylinder":
            return bool(np.hypot(x[0], x[1]) <= d["radius"] and abs(x[2]) <= d["length"] / 2)
        half = self.points[1][2]
        x[2] = x[2] - np.clip(x[2], -half, half)
        return bool(np.linalg.norm(x) <= self.round)

    def lowest(self):
        z = (self.points @ self.world_rot.T)[:, 2] + self.world_pos[2]
        return float(z.min()) - self.round


def touching(a, b):
    """Whether two solids overlap: their surfaces cross, or one holds the other."""
    cres = fcl.CollisionResult()
    if fcl.collide(a.obj, b.obj, fcl.CollisionRequest(), cres) > 0:
        return True
    return a.contains(b.anchor()) or b.contains(a.anchor())


def hull_distance(a, b):
    """Two disjoint hulls' distance: FCL's GJK when the separating axis
    through its nearest points confirms it, else the exact triangle one."""
    res = fcl.DistanceResult()
    upper = fcl.distance(a.convex, b.convex, fcl.DistanceRequest(enable_nearest_points=True), res)
    pa, pb = np.asarray(res.nearest_points[0]), np.asarray(res.nearest_points[1])
    gap = float(np.linalg.norm(pb - pa))
    if upper > 0 and abs(gap - upper) < 1e-9:
        n = (pb - pa) / gap
        lower = b.extent(n)[0] - a.extent(n)[1]
        if upper - lower < 1e-6:
            return upper
    return fcl.distance(a.obj, b.obj, fcl.DistanceRequest(), fcl.DistanceResult())


def distance(a, b):
    """The signed distance of two solids; in contact, negative (the depth
    where FCL gives one, else a hair below zero)."""
    if touching(a, b):
        res = fcl.DistanceResult()
        d = fcl.distance(a.obj, b.obj, fcl.DistanceRequest(enable_signed_distance=True), res)
        return min(d, -1e-12)
    if a.convex is not None and b.convex is not None:
        return hull_distance(a, b)
    req = fcl.DistanceRequest(enable_signed_distance=True)
    return fcl.distance(a.obj, b.obj, req, fcl.DistanceResult())


def lower_bound(a, b):
    """How close two solids can come at most: their bounding balls' gap."""
    (ca, ra), (cb, rb) = a.ball(), b.ball()
    return float(np.linalg.norm(ca - cb)) - ra - rb


def main(scene_path, poses_path, out_path):
    def owner(x):
        if "link" in x:
            return links[x["link"]]
        return [obstacles[x["obstacle"]]]

    scene = json.load(open(scene_path))
    links = [[Shape(s) for s in shapes] for shapes in scene["links"]]
    obstacles = [Shape(o) for o in scene["obstacles"]]
    n_links = len(links)
    poses = np.fromfile(poses_path, dtype="<f8").reshape(-1, n_links, 12)
    floor = scene["floor"]
    out = []
    for pose in poses:
        for l, shapes in enumerate(links):
            rot, pos = pose[l, :9].reshape(3, 3), pose[l, 9:]
            for s in shapes:
                s.place_at(rot, pos)
        for k, o in enumerate(obstacles):
            frame = scene["obstacle_frames"][k]
            if frame is None:
                o.place_at(np.eye(3), np.zeros(3))
            else:
                o.place_at(pose[frame, :9].reshape(3, 3), pose[frame, 9:])
        best = (float("inf"), "")
        solids = []
        for a, b in scene["pairs"]:
            name = f"{a.get('name')} vs {b.get('name')}"
            if b.get("floor"):
                d = min(s.lowest() for s in owner(a)) - floor
                if d < best[0]:
                    best = (d, name)
            else:
                solids += [(lower_bound(s, t), s, t, name) for s in owner(a) for t in owner(b)]
        solids.sort(key=lambda x: x[0])
        for bound, s, t, name in solids:
            if bound >= best[0]:
                break
            d = distance(s, t)
            if d < best[0]:
                best = (d, name)
        out.append({"distance": best[0], "pair": best[1]})
    json.dump(out, open(out_path, "w"))


if __name__ == "__main__":
    main(*sys.argv[1:4])
