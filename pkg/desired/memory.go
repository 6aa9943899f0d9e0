/*
Copyright 2026 Flant JSC

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package desired

// The one place where a pod's memory is split between what StarRocks
// manages and what it needs besides. The class floors
// (classrules.FrontendMemoryFloor, BackendMemoryFloor) keep every size that
// reaches these functions large enough for the split to leave StarRocks a
// useful share.

const (
	mib = 1 << 20
	gib = 1 << 30
)

// JavaHeapMb is the FE -Xmx for a pod memory size: 75% of the memory, but at
// least 1 GiB is left outside the heap for what the JVM needs besides it
// (metaspace, code cache, thread stacks, Netty and BDB JE direct buffers) so
// the cgroup limit is not hit by the JVM growing to -Xmx; never below 256 MiB,
// the smallest heap an FE starts with.
func JavaHeapMb(memoryBytes int64) int64 {
	m := memoryBytes / mib
	return max(256, min(m*3/4, m-1024))
}

// BackendMemory is how a BE pod's memory limit is shared: mem_limit for
// what the BE tracks itself, the heap of its embedded JVM, and headroom.
type BackendMemory struct {
	// MemLimitBytes is be.conf mem_limit. The BE tracks its own allocations
	// up to it and refuses work beyond it, while the kernel OOM-kills the
	// whole pod at the cgroup limit.
	MemLimitBytes int64
	// JavaHeapMb is the -Xmx of the JVM the BE starts in its own process for
	// JNI (external catalogs, Java UDFs): be.conf JAVA_OPTS, which
	// start_backend.sh passes on as LIBHDFS_OPTS (StarRocks/starrocks
	// bin/start_backend.sh; one JAVA_OPTS for every JDK since 3.5, release
	// notes 3.5.0). mem_limit does not count the Java heap, and without -Xmx
	// the JVM would take a quarter of the container's memory.
	JavaHeapMb int64
}

// BackendMemoryFor splits a BE pod's memory: the JVM heap gets a tenth
// (256 MiB to 4 GiB), the headroom a tenth but at least 512 MiB for what
// neither tracks (allocator metadata, thread stacks, brpc buffers, the
// JVM's own non-heap), and mem_limit the rest. For the BE floor (4 GiB)
// that is 409 MiB, 512 MiB and 3,175 MiB.
func BackendMemoryFor(memoryBytes int64) BackendMemory {
	heap := min(max(memoryBytes/10, 256*mib), 4*gib) / mib * mib
	headroom := max(memoryBytes/10, 512*mib)
	return BackendMemory{MemLimitBytes: memoryBytes - heap - headroom, JavaHeapMb: heap / mib}
}
