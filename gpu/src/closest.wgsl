// Closest-hit narrowing (issue 42 spike): one invocation per ray walks meshray's 8-wide tree
// in f32 and names the few triangles among which the CPU's exact answer (`Bvh::cast_ray`:
// the least t, ties to the lowest triangle number, of the scalar watertight test) must lie,
// or raises a flag where it cannot. Every quantity that decides something carries an error
// bound E·(the magnitudes it was computed from), E = 2^-18, well above the few ulps (about
// 2^-21 relative) by which the CPU's and this kernel's arithmetic can differ (WGSL allows FMA
// contraction and 2.5-ulp division; both move results by ulps). A triangle is
// - a certain miss: two edge functions of strictly opposite signs beyond their bounds, or its
//   t interval entirely outside the ray's range;
// - a certain hit: three edge functions of one sign beyond their bounds, a plane denominator
//   beyond its bound, and the t interval inside the range;
// - otherwise a candidate: it might hit, at t no less than its interval's low end (its leaf
//   box's entry where the plane gives no interval).
// The t in question is the CPU's kept within the triangle's own bounding box
// (`triangle::within_box`): the plane's t, raised to the ray's entry into that box
// (`triangle::box_bounds`) where the entry lies beyond it by more than 2^-22 of t, then
// lowered to the box's exit where the exit lies before it by as much and not before the entry.
// The kernel computes the entry and the exit too, with bounds, so a triangle's interval is
// [max(min(plane low, exit low), entry low − E·|entry low|), max(plane high, entry high)]:
// the raise never reorders a certain best past a triangle the answer leaves out, and a
// plane t before t_min is no certain miss where the box is entered after it. Since a raised
// t is never before its own box's entry, a box pruned by its entry holds no closer hit,
// however nearly the ray grazes a triangle's plane.
// The answer: the certain hit of least t (`best`), and the other candidates whose low end is
// no greater than the best's high end (all candidates where there is no best). If the CPU's
// test accepts the best, its t is at most the best's high end, and every triangle outside
// the list either misses or hits beyond it: the exact answer is among the best and the list.
// Where the list overflows, the stack overflows or a corner is not finite, a flag makes the
// CPU cast the ray itself.
// Any hit (`params.mode` 1): the walk stops at the first certain hit, which is the answer
// (the CPU's test accepts it, in range); without one, every candidate in range is listed,
// and the CPU tests them until one hits.

struct Node {
    mn: array<array<f32, 8>, 3>,
    mx: array<array<f32, 8>, 3>,
    child: array<u32, 8>,
    order: array<u32, 8>,
}

struct Packet {
    a: array<array<f32, 4>, 3>,
    b: array<array<f32, 4>, 3>,
    c: array<array<f32, 4>, 3>,
}

struct RayIn {
    o: array<f32, 3>,
    t_min: f32,
    d: array<f32, 3>,
    t_max: f32,
}

struct Answer {
    best: u32,
    t: f32,
    flags: u32,
    visits: u32,
    count: u32,
    _pad0: u32,
    _pad1: u32,
    _pad2: u32,
    candidates: array<u32, 8>,
}

struct Params {
    count: u32,
    // 0 the closest hit, 1 any hit (ANY).
    mode: u32,
    _pad1: u32,
    _pad2: u32,
}

@group(0) @binding(0) var<storage, read> nodes: array<Node>;
@group(0) @binding(1) var<storage, read> packets: array<Packet>;
@group(0) @binding(2) var<storage, read> rays: array<RayIn>;
@group(0) @binding(3) var<storage, read_write> answers: array<Answer>;
@group(0) @binding(4) var<uniform> params: Params;

const NO_CHILD: u32 = 0xffffffffu;
const LEAF: u32 = 0x80000000u;
const SORT: u32 = 0x01000000u;
const NONE: u32 = 0xffffffffu;
const NAN_BITS: u32 = 0x7fc00000u;
const STACK: u32 = 48u;
const E: f32 = 3.814697265625e-6; // 2^-18
const BIG: f32 = 3.0e38;
// Absolute slack on a box entry: covers a flushed subnormal difference (bound − o) times
// 1/d, |d| >= 2^-60 (the host casts rays with smaller direction components itself).
const TINY: f32 = 5.421010862427522e-20; // 2^-64
const R22: f32 = 2.384185791015625e-7;   // 2^-22, the CPU's raise threshold

// Flag bits. The CPU casts the ray itself where OVERFLOW, INPUT or LIST is set; NEAR and the
// WHY bits only say why the answer names candidates beside the best.
const FLAG_NEAR: u32 = 1u;      // other candidates' intervals reach the best's
const FLAG_OVERFLOW: u32 = 2u;  // the stack was full: subtrees were dropped
const FLAG_INPUT: u32 = 4u;     // a non-finite corner in a used lane, or an unusable ray
const FLAG_WHY: u32 = 8u;       // with FLAG_NEAR: 8 a certain hit, 16 an edge, 32 a plane
const FLAG_LIST: u32 = 64u;     // the list may be incomplete (full, or pruned past the best)
const FLAG_RAISED: u32 = 128u;  // some triangle's box entry widened its t interval (diagnostic)
const K: u32 = 8u;              // the candidate list's length
const ANY: u32 = 1u;            // params.mode: any hit

// The ray, set once per invocation.
var<private> o: array<f32, 3>;
var<private> d: array<f32, 3>;
var<private> inv: array<f32, 3>;
var<private> kx: u32;
var<private> ky: u32;
var<private> kz: u32;
var<private> sx: f32;
var<private> sy: f32;
var<private> t_min: f32;
var<private> t_max: f32;

// The walk's state.
var<private> best_slot: u32;
var<private> best_t: f32;
var<private> best_lo: f32;
var<private> best_hi: f32;
var<private> flags: u32;
// The other candidates (slots, and the low ends of their t intervals): every triangle
// that might hit in range other than the best, while its low end is within reach.
var<private> cand_slot: array<u32, K>;
var<private> cand_lo: array<f32, K>;
var<private> cand_n: u32;
// Why candidates were noted (the WHY bits, for diagnostics: set when noted, whether or not
// the candidate stays within reach).
var<private> why_bits: u32;
// The least t at which the walk left something out because the best was closer: a box's
// entry it did not enter, a candidate it dropped. A best's high end only falls as the walk
// goes if each new best's does; where a later best's high end reaches back past this, the
// list may be incomplete and the ray goes to the CPU.
var<private> pruned: f32;
// Any hit: a certain hit was found, the walk is over.
var<private> done: bool;

// Slot `slot` might hit at t >= lo, for reason `why` (0 a certain hit that is not the
// best, 1 edge functions too close to zero to tell, 2 a plane too nearly parallel to the ray,
// or a degenerate triangle, to bound t from it).
fn note_other(slot: u32, lo: f32, why: u32) {
    var l = lo;
    if !(l >= t_min) {
        l = t_min;
    }
    why_bits |= FLAG_WHY << why;
    if cand_n == K {
        // Full: drop those the best has put out of reach (its high end only falls).
        let reach = limit();
        var m = 0u;
        for (var j = 0u; j < K; j++) {
            if cand_lo[j] <= reach {
                cand_slot[m] = cand_slot[j];
                cand_lo[m] = cand_lo[j];
                m += 1u;
            } else {
                pruned = min(pruned, cand_lo[j]);
            }
        }
        cand_n = m;
    }
    if cand_n < K {
        cand_slot[cand_n] = slot;
        cand_lo[cand_n] = l;
        cand_n += 1u;
    } else {
        flags |= FLAG_LIST;
    }
}

// (x, y, bound on |x|, bound on |y|) of a corner `p` (its coordinates on axes kx, ky, kz)
// relative to the origin, sheared, as the CPU computes them.
fn sheared(p: vec3<f32>) -> vec4<f32> {
    let px = p.x - o[kx];
    let py = p.y - o[ky];
    let pz = p.z - o[kz];
    return vec4<f32>(px - sx * pz, py - sy * pz, abs(px) + abs(sx * pz), abs(py) + abs(sy * pz));
}

// The bound on |w - w_cpu| for w = p.x·q.y − p.y·q.x from sheared corners p and q (each
// (x, y, bound on |x|, bound on |y|)).
fn edge_bound(p: vec4<f32>, q: vec4<f32>) -> f32 {
    let first = p.z * abs(q.y) + abs(p.x) * q.w + p.w * abs(q.x) + abs(p.y) * q.z;
    let own = abs(p.x * q.y) + abs(p.y * q.x);
    let second = p.z * q.w + p.w * q.z;
    return E * (first + own) + E * E * second;
}

// Bounds on where the CPU's `box_bounds` says the ray enters the box of corners a, b, c:
// (low, high, the kernel's own value, state), state 0 known, 1 never (a zero direction
// component with the box ahead on that axis: the CPU's entry is +inf, so it raises any hit
// to +inf and refuses it), 2 the high end unknown (a product near overflow; the low end
// still holds, from the other axes). Per axis the CPU computes (bound − o)·(1/d), the bound
// the corners' least coordinate, or their greatest where d's sign bit is set, and keeps the
// greatest (a NaN bounds nothing; −inf where no axis does).
fn own_entry(a: vec3<f32>, b: vec3<f32>, c: vec3<f32>) -> vec4<f32> {
    let mn = min(min(a, b), c);
    let mx = max(max(a, b), c);
    var lo = -BIG;
    var hi = -BIG;
    var mid = -BIG;
    var state = 0.0;
    for (var k = 0u; k < 3u; k++) {
        let negative = (bitcast<u32>(d[k]) & 0x80000000u) != 0u;
        let bound = select(mn[k], mx[k], negative);
        if d[k] == 0.0 {
            // (bound − o)·(±inf): +inf where the box lies ahead on this axis, −inf behind,
            // NaN (no bound) on its plane.
            if (negative && bound < o[k]) || (!negative && bound > o[k]) {
                return vec4<f32>(BIG, BIG, BIG, 1.0);
            }
            continue;
        }
        let near = (bound - o[k]) * inv[k];
        if !(abs(near) < 1.0e37) {
            state = 2.0;
            continue;
        }
        // 1/d to 2.5 ulps here, correctly rounded on the CPU; three roundings each side.
        let err = abs(near) * E + TINY;
        lo = max(lo, near - err);
        hi = max(hi, near + err);
        mid = max(mid, near);
    }
    return vec4<f32>(lo, hi, mid, state);
}

// A lower bound on where the CPU's `box_bounds` says the ray leaves the box of corners a, b,
// c: per axis (bound − o)·(1/d), the bound the corners' greatest coordinate, or their least
// where d's sign bit is set, the least of the three (a NaN bounds nothing; +inf where no
// axis does). −BIG where an axis's product is near overflow.
fn own_exit_low(a: vec3<f32>, b: vec3<f32>, c: vec3<f32>) -> f32 {
    let mn = min(min(a, b), c);
    let mx = max(max(a, b), c);
    var lo = BIG;
    for (var k = 0u; k < 3u; k++) {
        let negative = (bitcast<u32>(d[k]) & 0x80000000u) != 0u;
        let bound = select(mx[k], mn[k], negative);
        if d[k] == 0.0 {
            // (bound − o)·(±inf): its sign's, NaN (no bound) on the plane.
            let s = bound - o[k];
            if s != 0.0 && ((s > 0.0) == negative) {
                lo = -BIG;
            }
            continue;
        }
        let far = (bound - o[k]) * inv[k];
        if !(abs(far) < 1.0e37) {
            lo = -BIG;
            continue;
        }
        // As the entry's: 1/d to 2.5 ulps here, correctly rounded on the CPU.
        lo = min(lo, far - abs(far) * E - TINY);
    }
    return lo;
}

// Tests the triangle in `lane` of packet `pi`, whose leaf box the ray enters at `box_t` or
// later.
fn test_lane(pi: u32, lane: u32, box_t: f32) {
    let a = vec3<f32>(packets[pi].a[0][lane], packets[pi].a[1][lane], packets[pi].a[2][lane]);
    if all(bitcast<vec3<u32>>(a) == vec3<u32>(NAN_BITS)) {
        return; // an empty lane
    }
    let b = vec3<f32>(packets[pi].b[0][lane], packets[pi].b[1][lane], packets[pi].b[2][lane]);
    let c = vec3<f32>(packets[pi].c[0][lane], packets[pi].c[1][lane], packets[pi].c[2][lane]);
    let lim = vec3<f32>(3.0e38);
    if any(abs(a) > lim) || any(abs(b) > lim) || any(abs(c) > lim)
        || any(a != a) || any(b != b) || any(c != c) {
        flags |= FLAG_INPUT;
        return;
    }
    // Two corners alike: the f64 normal is exactly zero, which the CPU never hits.
    if all(a == b) || all(b == c) || all(a == c) {
        return;
    }
    let sa = sheared(vec3<f32>(a[kx], a[ky], a[kz]));
    let sb = sheared(vec3<f32>(b[kx], b[ky], b[kz]));
    let sc = sheared(vec3<f32>(c[kx], c[ky], c[kz]));
    let wa = sc.x * sb.y - sc.y * sb.x;
    let wb = sa.x * sc.y - sa.y * sc.x;
    let wc = sb.x * sa.y - sb.y * sa.x;
    // Each sheared coordinate is within E·(its bound) of the CPU's; the products' errors
    // to first order, their own rounding, and the second-order term.
    let ea = edge_bound(sc, sb);
    let eb = edge_bound(sa, sc);
    let ec = edge_bound(sb, sa);
    let pos = (wa > ea) || (wb > eb) || (wc > ec);
    let neg = (wa < -ea) || (wb < -eb) || (wc < -ec);
    if pos && neg {
        return; // a certain miss
    }
    let inside = (pos && wa > ea && wb > eb && wc > ec) || (neg && wa < -ea && wb < -eb && wc < -ec);
    // t from the plane, as the CPU (which does it in f64).
    let e1 = b - a;
    let e2 = c - a;
    let n = cross(e1, e2);
    let ae1 = abs(e1);
    let ae2 = abs(e2);
    let n_mag = vec3<f32>(
        ae1.y * ae2.z + ae1.z * ae2.y,
        ae1.z * ae2.x + ae1.x * ae2.z,
        ae1.x * ae2.y + ae1.y * ae2.x,
    );
    // The CPU raises a hit's t to its box entry (see own_entry) and lowers it to its box
    // exit: its t is at least the entry less 2^-21 of it (not raised, t >= entry −
    // 2^-22·|t|, t near the entry; lowered, to an exit not before the entry), at most the
    // greater of the plane's t and the entry, and at least the lesser of the plane's t and
    // the exit.
    let entry = own_entry(a, b, c);
    if entry.w == 1.0 {
        return; // the CPU's entry is +inf: a certain miss
    }
    let raise_lo = entry.x - abs(entry.x) * E;
    let dv = vec3<f32>(d[0], d[1], d[2]);
    let ao = a - vec3<f32>(o[0], o[1], o[2]);
    let den = dot(n, dv);
    let num = dot(n, ao);
    let e_den = E * dot(n_mag, abs(dv));
    let e_num = E * dot(n_mag, abs(ao));
    let t = num / den;
    let dt = (e_num + abs(t) * e_den) / (abs(den) - e_den) + E * abs(t);
    if !(abs(den) > e_den) || !(abs(t) + dt < BIG) {
        // Nearly parallel, degenerate, or not finite: the plane's t unknown, the raised t
        // no earlier than the own box's entry, nor than the leaf box's (which holds it).
        let lo = max(box_t, raise_lo);
        if lo > t_max {
            return;
        }
        note_other(pi * 4u + lane, lo, 2u);
        return;
    }
    // Lowered to the exit only where that is not before the entry: never below raise_lo.
    let lo = max(min(t - dt, own_exit_low(a, b, c)), raise_lo);
    let plane_hi = t + dt;
    let hi = max(plane_hi, entry.y);
    let known = entry.w == 0.0;
    if entry.y > plane_hi || !known {
        flags |= FLAG_RAISED;
    }
    if (known && hi < t_min) || lo > t_max {
        return; // out of range for certain
    }
    // The kernel's own guess at the CPU's raised t, to choose the best by.
    var guess = t;
    if entry.z > t + abs(t) * R22 {
        guess = entry.z;
    }
    if inside && known && lo >= t_min && hi <= t_max && hi < BIG {
        if params.mode == ANY {
            best_slot = pi * 4u + lane;
            best_t = guess;
            best_lo = lo;
            best_hi = hi;
            done = true;
            return;
        }
        if best_slot == NONE || guess < best_t {
            if best_slot != NONE {
                note_other(best_slot, best_lo, 0u);
            }
            best_slot = pi * 4u + lane;
            best_t = guess;
            best_lo = lo;
            best_hi = hi;
        } else {
            note_other(pi * 4u + lane, lo, 0u);
        }
    } else if inside {
        // A certain hit astride the range's end, or whose raised t is not bounded above.
        note_other(pi * 4u + lane, lo, 0u);
    } else {
        note_other(pi * 4u + lane, lo, 1u);
    }
}

// How far the walk goes: the range's end, or the best certain hit's high end.
fn limit() -> f32 {
    var l = t_max;
    if best_slot != NONE && best_hi < l {
        l = best_hi;
    }
    return l + abs(l) * E;
}

// Whether a ray is one the CPU may call invalid: a coordinate NaN or infinite, a zero
// direction, a NaN end of its range. Read from the bits: WGSL's arithmetic may assume there
// is no NaN or infinity. Rays given in a buffer reach the kernel unchecked; the CPU answers
// these (flagged) itself.
fn unusable(r: RayIn) -> bool {
    var zero = true;
    for (var a = 0u; a < 3u; a++) {
        let o_bits = bitcast<u32>(r.o[a]) & 0x7fffffffu;
        let d_bits = bitcast<u32>(r.d[a]) & 0x7fffffffu;
        if o_bits >= 0x7f800000u || d_bits >= 0x7f800000u {
            return true;
        }
        zero = zero && d_bits == 0u;
    }
    let nan = 0x7f800000u;
    return zero || (bitcast<u32>(r.t_min) & 0x7fffffffu) > nan
        || (bitcast<u32>(r.t_max) & 0x7fffffffu) > nan;
}

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    if i >= params.count {
        return;
    }
    let r = rays[i];
    o = r.o;
    d = r.d;
    t_min = r.t_min;
    t_max = r.t_max;
    best_slot = NONE;
    best_t = BIG;
    best_lo = BIG;
    best_hi = BIG;
    cand_n = 0u;
    why_bits = 0u;
    pruned = BIG;
    flags = 0u;
    done = false;
    var visits = 0u;
    if unusable(r) {
        var none: array<u32, K>;
        answers[i] = Answer(NONE, 0.0, FLAG_INPUT, 0u, 0u, 0u, 0u, 0u, none);
        return;
    }
    if !(t_min <= t_max) {
        var none: array<u32, K>;
        answers[i] = Answer(NONE, 0.0, 0u, 0u, 0u, 0u, 0u, 0u, none);
        return;
    }
    // The watertight test's axes, as the CPU chooses them (the first of equal largest).
    let ad = vec3<f32>(abs(d[0]), abs(d[1]), abs(d[2]));
    if ad.x >= ad.y && ad.x >= ad.z {
        kz = 0u;
    } else if ad.y >= ad.z {
        kz = 1u;
    } else {
        kz = 2u;
    }
    kx = select(kz + 1u, 0u, kz == 2u);
    ky = select(kx + 1u, 0u, kx == 2u);
    if d[kz] < 0.0 {
        let s = kx;
        kx = ky;
        ky = s;
    }
    sx = d[kx] / d[kz];
    sy = d[ky] / d[kz];
    var octant = 0u;
    for (var a = 0u; a < 3u; a++) {
        inv[a] = select(1.0 / d[a], 0.0, d[a] == 0.0);
        if d[a] < 0.0 {
            octant |= 1u << a;
        }
    }

    var stack_node: array<u32, STACK>;
    var stack_t: array<f32, STACK>;
    var top = 1u;
    stack_node[0] = 0u;
    stack_t[0] = t_min;
    loop {
        if top == 0u || done {
            break;
        }
        top -= 1u;
        if stack_t[top] > limit() {
            pruned = min(pruned, stack_t[top]);
            continue;
        }
        let ni = stack_node[top];
        visits += 1u;
        let sorted = (nodes[ni].order[0] & SORT) != 0u;
        for (var j = 0u; j < 8u; j++) {
            // Farthest first, so the nearest is popped first.
            var k = j;
            if !sorted {
                k = (nodes[ni].order[j] >> (3u * octant)) & 7u;
            }
            let word = nodes[ni].child[k];
            if word == NO_CHILD {
                continue;
            }
            var tn = t_min;
            var tf = BIG;
            // The CPU's test may accept a point off its triangle by its rounding, a few
            // ulps of the corners' distances from the origin: pad by E times those.
            var reach = 0.0;
            for (var a = 0u; a < 3u; a++) {
                reach += max(abs(nodes[ni].mn[a][k] - o[a]), abs(nodes[ni].mx[a][k] - o[a]));
            }
            let pad = E * reach;
            for (var a = 0u; a < 3u; a++) {
                let lo = nodes[ni].mn[a][k] - pad;
                let hi = nodes[ni].mx[a][k] + pad;
                if d[a] == 0.0 {
                    if o[a] < lo || o[a] > hi {
                        tn = BIG;
                    }
                } else {
                    let t0 = (lo - o[a]) * inv[a];
                    let t1 = (hi - o[a]) * inv[a];
                    tn = max(tn, min(t0, t1));
                    tf = min(tf, max(t0, t1));
                }
            }
            if !(tn - abs(tn) * E <= tf + abs(tf) * E) {
                continue; // missed
            }
            if tn - abs(tn) * E > limit() {
                pruned = min(pruned, tn - abs(tn) * E);
                continue; // beyond the best
            }
            if (word & LEAF) != 0u {
                // A mesh's leaf lane is one packet (its count word counts the packet's
                // triangles, which the CPU walk does not read either).
                let p = word & ~LEAF;
                for (var lane = 0u; lane < 4u; lane++) {
                    test_lane(p, lane, tn - abs(tn) * E);
                    if done {
                        break;
                    }
                }
                if done {
                    break;
                }
            } else if top < STACK {
                stack_node[top] = word;
                stack_t[top] = tn - abs(tn) * E;
                top += 1u;
            } else {
                flags |= FLAG_OVERFLOW;
            }
        }
    }
    if done {
        // Any hit: the certain hit alone (the candidates are not needed).
        answers[i].best = best_slot;
        answers[i].t = best_t;
        answers[i].flags = flags;
        answers[i].visits = visits;
        answers[i].count = 0u;
        return;
    }
    if best_slot != NONE && pruned <= best_hi {
        flags |= FLAG_LIST;
    }
    // The candidates still within reach of the best (all of them where there is none).
    var n = 0u;
    for (var j = 0u; j < cand_n; j++) {
        if best_slot == NONE || cand_lo[j] <= best_hi {
            answers[i].candidates[n] = cand_slot[j];
            n += 1u;
        }
    }
    if n > 0u {
        flags |= FLAG_NEAR | why_bits;
    }
    answers[i].best = best_slot;
    answers[i].t = best_t;
    answers[i].flags = flags;
    answers[i].visits = visits;
    answers[i].count = n;
}
