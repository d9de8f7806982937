#!/usr/bin/env bash
# Issue 42's speed check, for a session lent a machine with a GPU (the `device` tool: one
# NVIDIA H100 or H200, 16 cores, no network). One short run: whether wgpu sees a Vulkan
# adapter there, then examples/speed.rs on Sponza (primary and random rays, the GPU against
# the CPU's 16 cores, answers compared). Record what it prints on docs/benchmarks.md with the
# date, either way.
#
# Prepare here, once (the machine is bare and offline; .device/ is ignored by git):
#   echo /.device/ >> .git/info/exclude; mkdir -p .device/gl /tmp/amd64/partial
#   o='-oAPT::Architecture=amd64 -oAPT::Architectures=amd64 -oDir::State::Lists=/tmp/amd64'
#   apt-get $o update; (cd .device/gl && apt-get $o download libvulkan1)
#   cargo build --release -p meshray-gpu --example speed
#   cp target/release/examples/speed .device/; cp ../shared/meshes/crytek-sponza/sponza.obj .device/
# then run:  device run, command "bash gpu/device-check.sh", carry [".device"], timeout_s 300.
set -uo pipefail
for f in .device/gl/*.deb; do dpkg -x "$f" /; done
ldconfig
nvidia-smi -L || echo "note: no nvidia-smi"
ldconfig -p | grep -q libvulkan || echo "note: no libvulkan after unpacking"
icd=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
if [ -z "${VK_DRIVER_FILES:-}" ] && [ -f "$icd" ]; then
    export VK_DRIVER_FILES="$icd"
fi
echo "VK_DRIVER_FILES=${VK_DRIVER_FILES:-unset}"
out="${OUT:-/tmp}"
# 2048 x 2048 primary rays and 4 million random ones.
timeout 240 .device/speed .device/sponza.obj 2048 4000000 2>&1 | grep -v XDG_RUNTIME_DIR | tee "$out/speed.txt"
