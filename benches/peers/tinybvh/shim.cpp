// meshray-peers: a C interface to tinybvh's BVH8_CPU, the only part of tinybvh the peer
// comparison calls. Compiled by build.rs with the `cc` crate (-O3 -march=native -std=c++20).
//
// - One thread: NO_THREADED_BUILDS turns off tinybvh's job system (it starts threads for
//   meshes of 50,000 triangles or more), so the build is timed on one thread like every
//   other engine's.
// - Rays are filled field by field: tinybvh's Ray constructor normalizes the direction, which
//   would change the meaning of t. The reciprocal uses tinybvh's own tinybvh_rcp.
// - BVH8_CPU's traversal needs AVX2 and FMA at compile time; without them its Intersect and
//   IsOccluded are stubs that exit the process. mrtb_compiled_with_avx2 says which build this
//   is, so the Rust side can skip the engine instead.

#define NO_THREADED_BUILDS
#define TINYBVH_IMPLEMENTATION
#include "tiny_bvh.h"

#include <cstddef>
#include <cstdint>
#include <new>
#include <vector>

namespace {

// The BVH and the vertex soup it was built from (tinybvh keeps a slice pointing at it).
struct Engine {
    std::vector<tinybvh::bvhvec4> soup;
    tinybvh::BVH8_CPU bvh;
};

#define MRTB_STRINGIFY0(x) #x
#define MRTB_STRINGIFY(x) MRTB_STRINGIFY0(x)

tinybvh::Ray make_ray(const float origin[3], const float direction[3], float t_max)
{
    tinybvh::Ray ray; // members default-initialized by the header (mask, instIdx)
    ray.O = tinybvh::bvhvec3(origin[0], origin[1], origin[2]);
    ray.D = tinybvh::bvhvec3(direction[0], direction[1], direction[2]);
    ray.rD = tinybvh::tinybvh_rcp(ray.D);
    ray.hit = tinybvh::Intersection{};
    ray.hit.t = t_max;
    return ray;
}

} // namespace

extern "C" {

// 1 when BVH8_CPU's traversal was compiled in (AVX2 and FMA enabled at compile time).
int mrtb_compiled_with_avx2(void)
{
#if defined(BVH_USEAVX2) && !defined(BVH_USENEON)
    return 1;
#else
    return 0;
#endif
}

// "1.6.8", from the header's own version macros.
const char* mrtb_version(void)
{
    return MRTB_STRINGIFY(TINY_BVH_VERSION_MAJOR) "." MRTB_STRINGIFY(
        TINY_BVH_VERSION_MINOR) "." MRTB_STRINGIFY(TINY_BVH_VERSION_SUB);
}

// The compiler's version string (__VERSION__), for the report.
const char* mrtb_compiler(void)
{
#ifdef __VERSION__
    return __VERSION__;
#else
    return "unknown";
#endif
}

// Builds a BVH8_CPU over an indexed mesh: `positions` holds 3 floats per vertex, `indices`
// 3 vertex numbers per triangle. Returns null for no triangles, an index out of range or an
// allocation failure. Hit triangle numbers are the positions of the triangles in `indices`.
void* mrtb_build(const float* positions, size_t vertex_count, const uint32_t* indices,
                 uint32_t triangle_count)
{
    if (triangle_count == 0) return nullptr; // tinybvh does not build empty trees
    Engine* engine = new (std::nothrow) Engine;
    if (!engine) return nullptr;
    try {
        engine->soup.resize(size_t(triangle_count) * 3);
    } catch (...) {
        delete engine;
        return nullptr;
    }
    for (size_t i = 0; i < size_t(triangle_count) * 3; i++) {
        const size_t v = indices[i];
        if (v >= vertex_count) {
            delete engine;
            return nullptr;
        }
        engine->soup[i] = tinybvh::bvhvec4(positions[3 * v], positions[3 * v + 1],
                                           positions[3 * v + 2], 0.0f);
    }
    engine->bvh.Build(engine->soup.data(), triangle_count);
    return engine;
}

void mrtb_free(void* engine)
{
    delete static_cast<Engine*>(engine);
}

// Bytes of the data the queries walk: interior nodes and leaves, whose triangles are copied
// in (v0, two edges and the triangle number). The intermediate BVH and MBVH<8> the build
// went through stay allocated in the object and are not counted, nor is the vertex soup.
size_t mrtb_bytes(const void* engine)
{
    return size_t(static_cast<const Engine*>(engine)->bvh.usedBlocks) * 64;
}

// The closest hit with 0 < t < t_max: writes t and the triangle number, returns 1; or 0.
int mrtb_intersect(const void* engine, const float origin[3], const float direction[3],
                   float t_max, float* t, uint32_t* triangle)
{
    tinybvh::Ray ray = make_ray(origin, direction, t_max);
    static_cast<const Engine*>(engine)->bvh.Intersect(ray);
    if (!(ray.hit.t < t_max)) return 0;
    *t = ray.hit.t;
    *triangle = ray.hit.prim;
    return 1;
}

// Whether anything is hit with 0 < t < t_max.
int mrtb_occluded(const void* engine, const float origin[3], const float direction[3],
                  float t_max)
{
    const tinybvh::Ray ray = make_ray(origin, direction, t_max);
    return static_cast<const Engine*>(engine)->bvh.IsOccluded(ray) ? 1 : 0;
}

} // extern "C"
