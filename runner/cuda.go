//go:build cgo

package runner

/*
#cgo LDFLAGS: -ldl
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

typedef int CUresult;
typedef int CUdevice;
typedef void *CUcontext;
typedef void *CUmodule;
typedef void *CUfunction;
typedef void *CUstream;
typedef void *CUevent;
typedef void *CUgraph;
typedef void *CUgraphExec;
typedef unsigned long long CUdeviceptr;
typedef int nvrtcResult;
typedef void *nvrtcProgram;

static void *mp_cuda, *mp_nvrtc;

#define FN(ret, name, args) static ret (*p_##name) args;
#define CUFNS \
	FN(CUresult, cuInit, (unsigned)) \
	FN(CUresult, cuDriverGetVersion, (int *)) \
	FN(CUresult, cuDeviceGet, (CUdevice *, int)) \
	FN(CUresult, cuDeviceGetCount, (int *)) \
	FN(CUresult, cuDeviceGetName, (char *, int, CUdevice)) \
	FN(CUresult, cuDeviceGetAttribute, (int *, int, CUdevice)) \
	FN(CUresult, cuDevicePrimaryCtxRetain, (CUcontext *, CUdevice)) \
	FN(CUresult, cuDevicePrimaryCtxRelease_v2, (CUdevice)) \
	FN(CUresult, cuCtxSetCurrent, (CUcontext)) \
	FN(CUresult, cuCtxSynchronize, (void)) \
	FN(CUresult, cuModuleLoadData, (CUmodule *, const void *)) \
	FN(CUresult, cuModuleUnload, (CUmodule)) \
	FN(CUresult, cuModuleGetFunction, (CUfunction *, CUmodule, const char *)) \
	FN(CUresult, cuFuncSetAttribute, (CUfunction, int, int)) \
	FN(CUresult, cuOccupancyMaxActiveBlocksPerMultiprocessor, (int *, CUfunction, int, size_t)) \
	FN(CUresult, cuMemAlloc_v2, (CUdeviceptr *, size_t)) \
	FN(CUresult, cuMemFree_v2, (CUdeviceptr)) \
	FN(CUresult, cuMemcpyHtoD_v2, (CUdeviceptr, const void *, size_t)) \
	FN(CUresult, cuMemcpyDtoH_v2, (void *, CUdeviceptr, size_t)) \
	FN(CUresult, cuMemsetD8_v2, (CUdeviceptr, unsigned char, size_t)) \
	FN(CUresult, cuMemcpyHtoDAsync_v2, (CUdeviceptr, const void *, size_t, CUstream)) \
	FN(CUresult, cuMemcpyDtoHAsync_v2, (void *, CUdeviceptr, size_t, CUstream)) \
	FN(CUresult, cuMemcpyDtoDAsync_v2, (CUdeviceptr, CUdeviceptr, size_t, CUstream)) \
	FN(CUresult, cuMemHostAlloc, (void **, size_t, unsigned)) \
	FN(CUresult, cuMemFreeHost, (void *)) \
	FN(CUresult, cuStreamCreate, (CUstream *, unsigned)) \
	FN(CUresult, cuStreamDestroy_v2, (CUstream)) \
	FN(CUresult, cuStreamSynchronize, (CUstream)) \
	FN(CUresult, cuEventCreate, (CUevent *, unsigned)) \
	FN(CUresult, cuEventDestroy_v2, (CUevent)) \
	FN(CUresult, cuEventRecord, (CUevent, CUstream)) \
	FN(CUresult, cuEventSynchronize, (CUevent)) \
	FN(CUresult, cuEventElapsedTime, (float *, CUevent, CUevent)) \
	FN(CUresult, cuLaunchKernel, (CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, CUstream, void **, void **)) \
	FN(CUresult, cuLaunchCooperativeKernel, (CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, CUstream, void **)) \
	FN(CUresult, cuStreamBeginCapture_v2, (CUstream, int)) \
	FN(CUresult, cuStreamEndCapture, (CUstream, CUgraph *)) \
	FN(CUresult, cuGraphInstantiateWithFlags, (CUgraphExec *, CUgraph, unsigned long long)) \
	FN(CUresult, cuGraphLaunch, (CUgraphExec, CUstream)) \
	FN(CUresult, cuGraphExecDestroy, (CUgraphExec)) \
	FN(CUresult, cuGraphDestroy, (CUgraph)) \
	FN(CUresult, cuGetErrorString, (CUresult, const char **))
#define NVFNS \
	FN(nvrtcResult, nvrtcVersion, (int *, int *)) \
	FN(nvrtcResult, nvrtcCreateProgram, (nvrtcProgram *, const char *, const char *, int, const char *const *, const char *const *)) \
	FN(nvrtcResult, nvrtcCompileProgram, (nvrtcProgram, int, const char *const *)) \
	FN(nvrtcResult, nvrtcGetProgramLogSize, (nvrtcProgram, size_t *)) \
	FN(nvrtcResult, nvrtcGetProgramLog, (nvrtcProgram, char *)) \
	FN(nvrtcResult, nvrtcGetCUBINSize, (nvrtcProgram, size_t *)) \
	FN(nvrtcResult, nvrtcGetCUBIN, (nvrtcProgram, char *)) \
	FN(nvrtcResult, nvrtcGetPTXSize, (nvrtcProgram, size_t *)) \
	FN(nvrtcResult, nvrtcGetPTX, (nvrtcProgram, char *)) \
	FN(nvrtcResult, nvrtcDestroyProgram, (nvrtcProgram *))
CUFNS
NVFNS
#undef FN

// mp_load_cuda opens the driver; it returns NULL or the missing symbol's name.
static const char *mp_load_cuda(const char *path) {
	if (mp_cuda) return NULL;
	void *h = dlopen(path, RTLD_NOW | RTLD_GLOBAL);
	if (!h) return "dlopen";
#define FN(ret, name, args) p_##name = (ret (*) args)dlsym(h, #name); \
	if (!p_##name && strcmp(#name, "cuLaunchCooperativeKernel") != 0) return #name;
	CUFNS
#undef FN
	mp_cuda = h;
	return NULL;
}

static const char *mp_load_nvrtc(const char *path) {
	if (mp_nvrtc) return NULL;
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!h) return "dlopen";
#define FN(ret, name, args) p_##name = (ret (*) args)dlsym(h, #name); if (!p_##name) return #name;
	NVFNS
#undef FN
	mp_nvrtc = h;
	return NULL;
}

static const char *mp_dlerror(void) { const char *e = dlerror(); return e ? e : ""; }
static int mp_has_coop(void) { return p_cuLaunchCooperativeKernel != NULL; }

static const char *mp_errstr(CUresult r) {
	const char *s = NULL;
	if (p_cuGetErrorString && p_cuGetErrorString(r, &s) == 0 && s) return s;
	return "unknown CUDA error";
}

static CUresult mp_init(void) { return p_cuInit(0); }
static CUresult mp_driver_version(int *v) { return p_cuDriverGetVersion(v); }
static CUresult mp_device_count(int *n) { return p_cuDeviceGetCount(n); }
static CUresult mp_device_get(CUdevice *d, int i) { return p_cuDeviceGet(d, i); }
static CUresult mp_device_name(char *b, int n, CUdevice d) { return p_cuDeviceGetName(b, n, d); }
static CUresult mp_attr(int *v, int a, CUdevice d) { return p_cuDeviceGetAttribute(v, a, d); }
static CUresult mp_ctx_retain(CUcontext *c, CUdevice d) { return p_cuDevicePrimaryCtxRetain(c, d); }
static CUresult mp_ctx_release(CUdevice d) { return p_cuDevicePrimaryCtxRelease_v2(d); }
static CUresult mp_ctx_set(CUcontext c) { return p_cuCtxSetCurrent(c); }
static CUresult mp_ctx_sync(void) { return p_cuCtxSynchronize(); }
static CUresult mp_module_load(CUmodule *m, const void *img) { return p_cuModuleLoadData(m, img); }
static CUresult mp_module_unload(CUmodule m) { return p_cuModuleUnload(m); }
static CUresult mp_module_func(CUfunction *f, CUmodule m, const char *n) { return p_cuModuleGetFunction(f, m, n); }
static CUresult mp_func_attr(CUfunction f, int a, int v) { return p_cuFuncSetAttribute(f, a, v); }
static CUresult mp_occupancy(int *n, CUfunction f, int bs, size_t smem) { return p_cuOccupancyMaxActiveBlocksPerMultiprocessor(n, f, bs, smem); }
static CUresult mp_alloc(CUdeviceptr *p, size_t n) { return p_cuMemAlloc_v2(p, n); }
static CUresult mp_free(CUdeviceptr p) { return p_cuMemFree_v2(p); }
static CUresult mp_htod(CUdeviceptr d, const void *h, size_t n) { return p_cuMemcpyHtoD_v2(d, h, n); }
static CUresult mp_dtoh(void *h, CUdeviceptr d, size_t n) { return p_cuMemcpyDtoH_v2(h, d, n); }
static CUresult mp_memset(CUdeviceptr d, unsigned char v, size_t n) { return p_cuMemsetD8_v2(d, v, n); }
static CUresult mp_htod_async(CUdeviceptr d, const void *h, size_t n, CUstream s) { return p_cuMemcpyHtoDAsync_v2(d, h, n, s); }
static CUresult mp_dtoh_async(void *h, CUdeviceptr d, size_t n, CUstream s) { return p_cuMemcpyDtoHAsync_v2(h, d, n, s); }
static CUresult mp_dtod_async(CUdeviceptr d, CUdeviceptr src, size_t n, CUstream s) { return p_cuMemcpyDtoDAsync_v2(d, src, n, s); }
static CUresult mp_host_alloc(void **p, size_t n) { return p_cuMemHostAlloc(p, n, 0); }
static CUresult mp_host_free(void *p) { return p_cuMemFreeHost(p); }
static CUresult mp_stream_create(CUstream *s) { return p_cuStreamCreate(s, 1); }
static CUresult mp_stream_destroy(CUstream s) { return p_cuStreamDestroy_v2(s); }
static CUresult mp_stream_sync(CUstream s) { return p_cuStreamSynchronize(s); }
static CUresult mp_event_create(CUevent *e) { return p_cuEventCreate(e, 0); }
static CUresult mp_event_destroy(CUevent e) { return p_cuEventDestroy_v2(e); }
static CUresult mp_event_record(CUevent e, CUstream s) { return p_cuEventRecord(e, s); }
static CUresult mp_event_sync(CUevent e) { return p_cuEventSynchronize(e); }
static CUresult mp_event_elapsed(float *ms, CUevent a, CUevent b) { return p_cuEventElapsedTime(ms, a, b); }

// mp_launch launches f with params given as an array of 8-byte words passed
// by value as one struct, plus an optional extra u32 argument.
static CUresult mp_launch(CUfunction f, unsigned grid, unsigned block, unsigned smem, CUstream s, void *params, int coop, int has_extra, unsigned extra) {
	void *args[2] = {params, &extra};
	if (coop) return p_cuLaunchCooperativeKernel(f, grid, 1, 1, block, 1, 1, smem, s, args);
	return p_cuLaunchKernel(f, grid, 1, 1, block, 1, 1, smem, s, args, NULL);
}
static CUresult mp_launch0(CUfunction f, CUstream s) {
	return p_cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, s, NULL, NULL);
}
static CUresult mp_capture_begin(CUstream s) { return p_cuStreamBeginCapture_v2(s, 2); }
static CUresult mp_capture_end(CUstream s, CUgraph *g) { return p_cuStreamEndCapture(s, g); }
static CUresult mp_graph_inst(CUgraphExec *x, CUgraph g) { return p_cuGraphInstantiateWithFlags(x, g, 0); }
static CUresult mp_graph_launch(CUgraphExec x, CUstream s) { return p_cuGraphLaunch(x, s); }
static CUresult mp_graph_exec_destroy(CUgraphExec x) { return p_cuGraphExecDestroy(x); }
static CUresult mp_graph_destroy(CUgraph g) { return p_cuGraphDestroy(g); }

static int mp_nvrtc_version(int *a, int *b) { return p_nvrtcVersion(a, b); }
// mp_compile compiles src with arch "--gpu-architecture=sm_90" (a cubin) or
// "--gpu-architecture=compute_90" (PTX).
// On success *out (malloc'd) holds the image; otherwise *out holds the log.
static int mp_compile(const char *src, const char *arch, int cubin, const char *extra, char **out, size_t *outn) {
	nvrtcProgram prog;
	int r = p_nvrtcCreateProgram(&prog, src, "megaproof_kernel.cu", 0, NULL, NULL);
	if (r) return r;
	const char *opts[] = {arch, "--std=c++17", "-default-device", extra};
	int cr = p_nvrtcCompileProgram(prog, extra ? 4 : 3, opts);
	size_t n = 0;
	if (cr) {
		p_nvrtcGetProgramLogSize(prog, &n);
		*out = malloc(n + 1);
		p_nvrtcGetProgramLog(prog, *out);
		(*out)[n] = 0;
		*outn = n;
		p_nvrtcDestroyProgram(&prog);
		return cr;
	}
	if (cubin) {
		p_nvrtcGetCUBINSize(prog, &n);
		*out = malloc(n + 1);
		p_nvrtcGetCUBIN(prog, *out);
	} else {
		p_nvrtcGetPTXSize(prog, &n);
		*out = malloc(n + 1);
		p_nvrtcGetPTX(prog, *out);
	}
	(*out)[n] = 0;
	*outn = n;
	p_nvrtcDestroyProgram(&prog);
	return 0;
}
*/
import "C"

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"time"
	"unsafe"

	"github.com/megaproof/megaproof/schedule"
)

// CUDA driver constants (from cuda.h) used here.
const (
	attrSMCount         = 16
	attrCCMajor         = 75
	attrCCMinor         = 76
	attrSharedPerSM     = 81
	attrCooperative     = 95
	attrSharedOptin     = 97
	funcMaxDynShared    = 8
	errCoopTooLarge     = 720
	paramWords          = 21
	statusWords         = 8
	defaultNVRTCLibrary = "libnvrtc.so"
	dynReserve          = 40 << 10 // static shared memory of the kernel, rounded up
)

// Device is one CUDA device with the interpreter kernel loaded. Its methods
// may be called from any goroutine; they serialize on the device.
type Device struct {
	mu      sync.Mutex
	dev     C.CUdevice
	ctx     C.CUcontext
	mod     C.CUmodule
	interp  C.CUfunction
	task    C.CUfunction
	empty   C.CUfunction
	stream  C.CUstream
	ev0     C.CUevent
	ev1     C.CUevent
	info    Info
	coop    bool
	smemPer int
	smemMax int
	closed  bool
	// pads caches padding's answers (occupancy queries cost driver calls).
	pads map[padKey][2]int
}

type padKey struct {
	threads, perSM int
	free           bool
}

// Info describes an opened device.
type Info struct {
	Name          string
	SMs           int
	Arch          string // e.g. "sm_90"
	Driver        int    // cuDriverGetVersion, e.g. 13000
	NVRTC         string // e.g. "13.0"
	Cooperative   bool   // the device supports cooperative launches
	Compile       time.Duration
	CompileCached bool
	// Fallback is set when NVRTC refused the kernel as written and it was
	// compiled with a fallback (line prefetches instead of bulk ones, or
	// PTX for the driver to compile); it holds the refusal.
	Fallback string
}

type cuError struct {
	call string
	code C.CUresult
}

func (e *cuError) Error() string {
	return fmt.Sprintf("runner: %s: CUDA error %d (%s)", e.call, int(e.code), C.GoString(C.mp_errstr(e.code)))
}

func check(call string, r C.CUresult) error {
	if r != 0 {
		return &cuError{call, r}
	}
	return nil
}

var (
	loadOnce sync.Once
	loadErr  error
	cubinMu  sync.Mutex
	cubins   = map[string][]byte{} // per arch: compiled image (cached per process)
	fallback = map[string]string{} // per arch: why a fallback was compiled
)

func load() error {
	loadOnce.Do(func() {
		lib := os.Getenv("MEGAPROOF_LIBCUDA")
		if lib == "" {
			lib = "libcuda.so.1"
		}
		cs := C.CString(lib)
		defer C.free(unsafe.Pointer(cs))
		if miss := C.mp_load_cuda(cs); miss != nil {
			loadErr = fmt.Errorf("%w: loading %s: %s %s", ErrNoDevice, lib, C.GoString(miss), C.GoString(C.mp_dlerror()))
			return
		}
		cands := []string{defaultNVRTCLibrary, "libnvrtc.so.13", "libnvrtc.so.12", "/usr/local/cuda/lib64/libnvrtc.so"}
		if env := os.Getenv("MEGAPROOF_NVRTC"); env != "" {
			cands = []string{env}
		}
		var msgs []string
		for _, c := range cands {
			s := C.CString(c)
			miss := C.mp_load_nvrtc(s)
			C.free(unsafe.Pointer(s))
			if miss == nil {
				return
			}
			msgs = append(msgs, c+": "+C.GoString(miss)+" "+C.GoString(C.mp_dlerror()))
		}
		loadErr = fmt.Errorf("%w: NVRTC not found (set MEGAPROOF_NVRTC): %v", ErrNoDevice, msgs)
	})
	return loadErr
}

// Open loads the CUDA driver and NVRTC, opens device 0 through its primary
// context and loads the interpreter kernel, compiled for the device's
// architecture (the compiled image is cached per process). It returns an
// error wrapping ErrNoDevice when there is no driver or device.
func Open() (*Device, error) {
	if err := load(); err != nil {
		return nil, err
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := check("cuInit", C.mp_init()); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNoDevice, err)
	}
	var n C.int
	if err := check("cuDeviceGetCount", C.mp_device_count(&n)); err != nil || n == 0 {
		return nil, fmt.Errorf("%w: no device (%v)", ErrNoDevice, err)
	}
	d := &Device{}
	var cdev C.CUdevice
	if err := check("cuDeviceGet", C.mp_device_get(&cdev, 0)); err != nil {
		return nil, err
	}
	d.dev = cdev
	attr := func(a int) int {
		var v C.int
		C.mp_attr(&v, C.int(a), d.dev)
		return int(v)
	}
	var name [256]C.char
	C.mp_device_name(&name[0], 256, d.dev)
	var drv, nvMaj, nvMin C.int
	C.mp_driver_version(&drv)
	C.mp_nvrtc_version(&nvMaj, &nvMin)
	d.info = Info{
		Name:        C.GoString(&name[0]),
		SMs:         attr(attrSMCount),
		Arch:        fmt.Sprintf("sm_%d%d", attr(attrCCMajor), attr(attrCCMinor)),
		Driver:      int(drv),
		NVRTC:       fmt.Sprintf("%d.%d", nvMaj, nvMin),
		Cooperative: attr(attrCooperative) != 0 && C.mp_has_coop() != 0,
	}
	d.coop = d.info.Cooperative
	d.smemPer, d.smemMax = attr(attrSharedPerSM), attr(attrSharedOptin)
	var ctx C.CUcontext
	if err := check("cuDevicePrimaryCtxRetain", C.mp_ctx_retain(&ctx, d.dev)); err != nil {
		return nil, err
	}
	d.ctx = ctx
	if err := d.init(); err != nil {
		C.mp_ctx_release(d.dev)
		return nil, err
	}
	return d, nil
}

func (d *Device) init() error {
	if err := check("cuCtxSetCurrent", C.mp_ctx_set(d.ctx)); err != nil {
		return err
	}
	img, cached, took, err := compile(d.info.Arch)
	if err != nil {
		return err
	}
	d.info.Compile, d.info.CompileCached = took, cached
	cubinMu.Lock()
	d.info.Fallback = fallback[d.info.Arch]
	cubinMu.Unlock()
	cimg := C.CBytes(img)
	defer C.free(cimg)
	var mod C.CUmodule
	if err := check("cuModuleLoadData", C.mp_module_load(&mod, cimg)); err != nil {
		return err
	}
	d.mod = mod
	for _, f := range []struct {
		name string
		fn   *C.CUfunction
	}{{"mp_interp", &d.interp}, {"mp_task", &d.task}, {"mp_empty", &d.empty}} {
		cn := C.CString(f.name)
		var fn C.CUfunction
		err := check("cuModuleGetFunction "+f.name, C.mp_module_func(&fn, d.mod, cn))
		C.free(unsafe.Pointer(cn))
		*f.fn = fn
		if err != nil {
			return err
		}
	}
	if d.smemMax > 48<<10 {
		if err := check("cuFuncSetAttribute", C.mp_func_attr(d.interp, funcMaxDynShared, C.int(d.smemMax-dynReserve))); err != nil {
			return err
		}
	}
	var st C.CUstream
	var e0, e1 C.CUevent
	if err := check("cuStreamCreate", C.mp_stream_create(&st)); err != nil {
		return err
	}
	if err := check("cuEventCreate", C.mp_event_create(&e0)); err != nil {
		return err
	}
	if err := check("cuEventCreate", C.mp_event_create(&e1)); err != nil {
		return err
	}
	d.stream, d.ev0, d.ev1 = st, e0, e1
	return nil
}

// compile returns the kernel image for arch, compiling it once per process.
func compile(arch string) (img []byte, cached bool, took time.Duration, err error) {
	cubinMu.Lock()
	defer cubinMu.Unlock()
	if img, ok := cubins[arch]; ok {
		return img, true, 0, nil
	}
	t0 := time.Now()
	source := kernelSource()
	// MEGAPROOF_KERNEL_CACHE names a folder of compiled images keyed by
	// the source, the architecture and NVRTC's version, so that the
	// processes of one session compile the kernel once.
	var cachePath string
	if dir := os.Getenv("MEGAPROOF_KERNEL_CACHE"); dir != "" {
		var a, b C.int
		C.mp_nvrtc_version(&a, &b)
		h := sha256.Sum256([]byte(fmt.Sprintf("%s\x00%s\x00%d.%d", source, arch, a, b)))
		cachePath = filepath.Join(dir, fmt.Sprintf("mp_interp-%s-%x.img", arch, h[:12]))
		if img, err := os.ReadFile(cachePath); err == nil && len(img) > 0 {
			cubins[arch] = img
			return img, true, time.Since(t0), nil
		}
	}
	defer func() {
		if err == nil && cachePath != "" {
			os.MkdirAll(filepath.Dir(cachePath), 0o755)
			if f, e := os.CreateTemp(filepath.Dir(cachePath), "tmp-*"); e == nil {
				f.Write(img)
				f.Close()
				os.Rename(f.Name(), cachePath)
			}
		}
	}()
	src := C.CString(source)
	defer C.free(unsafe.Pointer(src))
	try := func(a string, cubin bool, define string) ([]byte, error) {
		ca := C.CString("--gpu-architecture=" + a)
		defer C.free(unsafe.Pointer(ca))
		var cx *C.char
		if define != "" {
			cx = C.CString("-D" + define)
			defer C.free(unsafe.Pointer(cx))
		}
		var out *C.char
		var n C.size_t
		cb := C.int(0)
		if cubin {
			cb = 1
		}
		r := C.mp_compile(src, ca, cb, cx, &out, &n)
		if out != nil {
			defer C.free(unsafe.Pointer(out))
		}
		if r != 0 {
			log := ""
			if out != nil {
				log = C.GoString(out)
			}
			return nil, fmt.Errorf("runner: NVRTC error %d compiling for %s: %s", int(r), a, log)
		}
		b := C.GoBytes(unsafe.Pointer(out), C.int(n))
		if !cubin {
			b = append(b, 0) // cuModuleLoadData reads PTX as a C string
		}
		return b, nil
	}
	img, err = try(arch, true, "")
	if err != nil {
		fallback[arch] = err.Error()
		// An NVRTC that does not know the sm_90 bulk prefetch: line
		// prefetches instead.
		img, err = try(arch, true, "MP_NO_BULK_PREFETCH")
	}
	if err != nil {
		// An NVRTC older than the device: fall back to PTX for the driver's JIT.
		var err2 error
		if img, err2 = try("compute_"+arch[3:], false, "MP_NO_BULK_PREFETCH"); err2 != nil {
			return nil, false, 0, errors.Join(err, err2)
		}
	}
	cubins[arch] = img
	return img, false, time.Since(t0), nil
}

// Info describes the device.
func (d *Device) Info() Info { return d.info }

// Close releases the device's module and its primary context reference.
func (d *Device) Close() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return nil
	}
	d.closed = true
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	C.mp_ctx_set(d.ctx)
	C.mp_event_destroy(d.ev0)
	C.mp_event_destroy(d.ev1)
	C.mp_stream_destroy(d.stream)
	C.mp_module_unload(d.mod)
	return check("cuDevicePrimaryCtxRelease", C.mp_ctx_release(d.dev))
}

// enter locks the device and makes its context current on this OS thread.
func (d *Device) enter() (func(), error) {
	d.mu.Lock()
	if d.closed {
		d.mu.Unlock()
		return nil, errors.New("runner: device closed")
	}
	runtime.LockOSThread()
	leave := func() { runtime.UnlockOSThread(); d.mu.Unlock() }
	if err := check("cuCtxSetCurrent", C.mp_ctx_set(d.ctx)); err != nil {
		leave()
		return nil, err
	}
	return leave, nil
}

// devMem is a set of device allocations freed together.
type devMem struct{ ptrs []C.CUdeviceptr }

func (m *devMem) alloc(n int) (C.CUdeviceptr, error) {
	var p C.CUdeviceptr
	if err := check("cuMemAlloc", C.mp_alloc(&p, C.size_t(max(n, 8)))); err != nil {
		return 0, err
	}
	m.ptrs = append(m.ptrs, p)
	return p, nil
}

func (m *devMem) free() {
	for _, p := range m.ptrs {
		C.mp_free(p)
	}
}

func htod[T any](dst C.CUdeviceptr, src []T) error {
	if len(src) == 0 {
		return nil
	}
	n := len(src) * int(unsafe.Sizeof(src[0]))
	return check("cuMemcpyHtoD", C.mp_htod(dst, unsafe.Pointer(&src[0]), C.size_t(n)))
}

func dtoh[T any](dst []T, src C.CUdeviceptr) error {
	if len(dst) == 0 {
		return nil
	}
	n := len(dst) * int(unsafe.Sizeof(dst[0]))
	return check("cuMemcpyDtoH", C.mp_dtoh(unsafe.Pointer(&dst[0]), src, C.size_t(n)))
}

func upload[T any](m *devMem, src []T) (C.CUdeviceptr, error) {
	var z T
	p, err := m.alloc(len(src) * int(unsafe.Sizeof(z)))
	if err != nil {
		return 0, err
	}
	return p, htod(p, src)
}

// session is an encoded program resident on the device.
//
// Its sync state (counters, barriers, semaphores, claims, control words,
// status table and worker permutation) lives in one allocation, sync, with
// a pristine copy of its initial value beside it: a run resets the state
// with one device-to-device copy on the stream, so the host issues no
// synchronous copy per run. The pristine copy is rebuilt only when the
// permutation options change.
type session struct {
	e                  *Encoded
	mem                devMem
	params             [paramWords]uint64
	heap, ctr, bar, sm C.CUdeviceptr
	claim, ctl, status C.CUdeviceptr
	perm               C.CUdeviceptr
	sync, pristine     C.CUdeviceptr
	trace              C.CUdeviceptr // Options.Trace's table, allocated on first use
	syncBytes          int
	statusOff          int
	pristineFor        *permKey       // the options the pristine copy was built for
	hostStatus         unsafe.Pointer // pinned, statusWords per worker
}

type permKey struct {
	permute bool
	seed    uint64
}

func (d *Device) newSession(e *Encoded) (*session, error) { return d.newSessionOn(e, 0) }

// newSessionOn is newSession on an existing heap (0: allocate one).
func (d *Device) newSessionOn(e *Encoded, heap C.CUdeviceptr) (*session, error) {
	s := &session{e: e, heap: heap}
	ok := false
	defer func() {
		if !ok {
			s.free()
		}
	}()
	var err error
	up := func(dst *C.CUdeviceptr, f func() (C.CUdeviceptr, error)) {
		if err == nil {
			*dst, err = f()
		}
	}
	var ins, streams, tasks, accs, dyninfo C.CUdeviceptr
	if s.heap == 0 {
		up(&s.heap, func() (C.CUdeviceptr, error) { return s.mem.alloc(int(e.HeapBytes)) })
	}
	up(&ins, func() (C.CUdeviceptr, error) { return upload(&s.mem, append(e.ins, 0, 0)) })
	up(&streams, func() (C.CUdeviceptr, error) { return upload(&s.mem, e.streams) })
	up(&tasks, func() (C.CUdeviceptr, error) { return upload(&s.mem, append(e.tasks, make([]uint64, taskWords)...)) })
	up(&accs, func() (C.CUdeviceptr, error) { return upload(&s.mem, append(e.accs, make([]uint64, accessWords)...)) })
	up(&dyninfo, func() (C.CUdeviceptr, error) { return upload(&s.mem, append(e.dyninfo, 0)) })
	if err != nil {
		return nil, err
	}
	// One allocation for the sync state, 8-byte aligned parts.
	ctr, bar, sem := e.initialSync()
	off := 0
	part := func(n int) int { o := off; off += (n + 7) &^ 7; return o }
	oc, ob, os := part(8*len(ctr)), part(8*len(bar)), part(8*len(sem))
	ocl, octl := part(4*(len(e.dyninfo)+1)), part(8*8)
	ost, operm := part(8*statusWords*e.Workers), part(4*e.Workers)
	s.syncBytes, s.statusOff = off, ost
	up(&s.sync, func() (C.CUdeviceptr, error) { return s.mem.alloc(off) })
	up(&s.pristine, func() (C.CUdeviceptr, error) { return s.mem.alloc(off) })
	if err != nil {
		return nil, err
	}
	at := func(o int) C.CUdeviceptr { return s.sync + C.CUdeviceptr(o) }
	s.ctr, s.bar, s.sm, s.claim, s.ctl, s.status, s.perm = at(oc), at(ob), at(os), at(ocl), at(octl), at(ost), at(operm)
	var hp unsafe.Pointer
	if err := check("cuMemHostAlloc", C.mp_host_alloc(&hp, C.size_t(8*statusWords*e.Workers))); err != nil {
		return nil, err
	}
	s.hostStatus = hp
	s.params = [paramWords]uint64{
		uint64(s.heap), uint64(ins), uint64(streams), uint64(tasks), uint64(accs),
		uint64(s.ctr), uint64(s.bar), uint64(s.sm), uint64(s.claim), uint64(dyninfo),
		uint64(s.ctl), uint64(s.status), uint64(s.perm),
		uint64(e.Workers), uint64(len(e.dyninfo)), 0, 0, 0, uint64(e.Steps), 0, 0,
	}
	ok = true
	return s, nil
}

// free releases the session's device and pinned host memory.
func (s *session) free() {
	s.mem.free()
	if s.hostStatus != nil {
		C.mp_host_free(s.hostStatus)
		s.hostStatus = nil
	}
}

// reset uploads the initial heap and sync state for one run.
func (s *session) reset(o Options, st C.CUstream) error {
	e := s.e
	img, err := e.ImageFrom(o.Poison, o.Init)
	if err != nil {
		return err
	}
	if err := htod(s.heap, img); err != nil {
		return err
	}
	return s.resetSync(o, st)
}

// resetSync resets the sync state on stream st (one device-to-device copy
// from the pristine state, rebuilt first when the permutation options
// changed) and sets the launch options.
func (s *session) resetSync(o Options, st C.CUstream) error {
	if err := s.ensurePristine(o); err != nil {
		return err
	}
	if err := check("cuMemcpyDtoDAsync", C.mp_dtod_async(s.sync, s.pristine, C.size_t(s.syncBytes), st)); err != nil {
		return err
	}
	s.params[15] = uint64(o.timeout().Nanoseconds())
	s.params[16] = uint64(o.MaxDelay.Nanoseconds())
	s.params[17] = o.Seed
	s.params[19] = uint64(o.prefetch())
	s.params[20] = 0
	if o.Trace {
		if s.trace == 0 {
			p, err := s.mem.alloc(8 * 4 * len(s.e.prog.Tasks))
			if err != nil {
				return err
			}
			s.trace = p
		}
		s.params[20] = uint64(s.trace)
	}
	return nil
}

// buildPristine uploads the initial sync state to the pristine copy.
func (s *session) buildPristine(o Options) error {
	e := s.e
	img := make([]byte, s.syncBytes)
	put := func(dst C.CUdeviceptr, words []uint64) {
		o := int(dst - s.sync)
		for i, w := range words {
			binary.LittleEndian.PutUint64(img[o+8*i:], w)
		}
	}
	ctr, bar, sem := e.initialSync()
	put(s.ctr, ctr)
	put(s.bar, bar)
	put(s.sm, sem)
	po := int(s.perm - s.sync)
	for i, w := range permutation(e.Workers, o) {
		binary.LittleEndian.PutUint32(img[po+4*i:], w)
	}
	return htod(s.pristine, img)
}

// padding returns the dynamic shared memory that limits residency to perSM
// blocks per SM (0 when no padding applies), and the resulting residency.
// Answers are cached per device.
func (d *Device) padding(threads, perSM int, free bool) (int, int) {
	k := padKey{threads, perSM, free}
	if v, ok := d.pads[k]; ok {
		return v[0], v[1]
	}
	smem, n := d.padQuery(threads, perSM, free)
	if d.pads == nil {
		d.pads = map[padKey][2]int{}
	}
	d.pads[k] = [2]int{smem, n}
	return smem, n
}

func (d *Device) padQuery(threads, perSM int, free bool) (int, int) {
	occ := func(smem int) int {
		var n C.int
		if C.mp_occupancy(&n, d.interp, C.int(threads), C.size_t(smem)) != 0 {
			return 0
		}
		return int(n)
	}
	natural := occ(0)
	if free || perSM >= natural || perSM < 1 || d.smemPer == 0 {
		return 0, natural
	}
	smem := d.smemPer/(perSM+1) + 1
	for i := 0; i < 64 && smem <= d.smemMax-dynReserve; i++ {
		n := occ(smem)
		if n == perSM {
			return smem, n
		}
		if n > perSM {
			smem += 1024
		} else {
			smem -= 512
		}
	}
	return 0, natural
}

// Run verifies p (unless opt.AllowUnsafe), executes it once on the device
// and returns every buffer's bytes. A run stopped by the watchdog returns a
// *DeadlockError; a cooperative launch larger than the device's residency
// returns an error wrapping ErrOccupancy.
func (d *Device) Run(ctx context.Context, p *schedule.Program, opt Options) (*Outcome, error) {
	if err := gate(ctx, p, opt); err != nil {
		return nil, err
	}
	e, err := encode(p, opt.Body)
	if err != nil {
		return nil, err
	}
	leave, err := d.enter()
	if err != nil {
		return nil, err
	}
	defer leave()
	s, err := d.newSession(e)
	if err != nil {
		return nil, err
	}
	defer s.free()
	return d.runSession(s, opt)
}

func (d *Device) runSession(s *session, opt Options) (*Outcome, error) {
	t0 := time.Now()
	if err := s.reset(opt, d.stream); err != nil {
		return nil, err
	}
	return d.launch(s, opt, t0, true, nil)
}

// stepIO is one run's token traffic on pinned host memory: in is copied to
// the device before the launch and out read back after it, both on the
// run's stream.
type stepIO struct {
	inDst    C.CUdeviceptr
	in       unsafe.Pointer
	inBytes  int
	outSrc   C.CUdeviceptr
	out      unsafe.Pointer
	outBytes int
}

// launch runs the session's kernel once on its current heap and sync
// state (reset by the caller on d.stream); with download it returns every
// buffer's bytes. io, when set, is copied in before the launch and out
// after it. The host waits once, for the whole stream.
func (d *Device) launch(s *session, opt Options, t0 time.Time, download bool, io *stepIO) (*Outcome, error) {
	e := s.e
	threads := opt.threads()
	if threads > MaxBlockThreads || threads%32 != 0 {
		return nil, fmt.Errorf("runner: %d threads per block: the kernel takes multiples of 32 up to %d", threads, MaxBlockThreads)
	}
	smem, perSM := d.padding(threads, e.prog.Launch.PerSM, opt.FreeOccupancy)
	coop := e.prog.Launch.Cooperative && d.coop
	if err := permuteRefusal(opt.Permute, coop, e.Workers, perSM, d.info.SMs); err != nil {
		return nil, err
	}
	cc := C.int(0)
	if coop {
		cc = 1
	}
	if io != nil && io.inBytes > 0 {
		if err := check("cuMemcpyHtoDAsync", C.mp_htod_async(io.inDst, io.in, C.size_t(io.inBytes), d.stream)); err != nil {
			return nil, err
		}
	}
	if err := check("cuEventRecord", C.mp_event_record(d.ev0, d.stream)); err != nil {
		return nil, err
	}
	params := s.params
	r := C.mp_launch(d.interp, C.uint(e.Workers), C.uint(threads), C.uint(smem), d.stream, unsafe.Pointer(&params[0]), cc, 0, 0)
	if r == errCoopTooLarge {
		return nil, fmt.Errorf("%w: %d workers, %d blocks per SM × %d SMs resident: %v", ErrOccupancy, e.Workers, perSM, d.info.SMs, &cuError{"cuLaunchCooperativeKernel", r})
	}
	if err := check("launch", r); err != nil {
		return nil, err
	}
	if err := check("cuEventRecord", C.mp_event_record(d.ev1, d.stream)); err != nil {
		return nil, err
	}
	nst := statusWords * e.Workers
	if err := check("cuMemcpyDtoHAsync", C.mp_dtoh_async(s.hostStatus, s.status, C.size_t(8*nst), d.stream)); err != nil {
		return nil, err
	}
	if io != nil && io.outBytes > 0 {
		if err := check("cuMemcpyDtoHAsync", C.mp_dtoh_async(io.out, io.outSrc, C.size_t(io.outBytes), d.stream)); err != nil {
			return nil, err
		}
	}
	if err := check("kernel", C.mp_stream_sync(d.stream)); err != nil {
		return nil, err
	}
	var ms C.float
	C.mp_event_elapsed(&ms, d.ev0, d.ev1)
	out := &Outcome{Kernel: time.Duration(float64(ms) * 1e6), Cooperative: coop, PerSM: perSM}
	status := unsafe.Slice((*uint64)(s.hostStatus), nst)
	if download {
		heap := make([]byte, e.HeapBytes)
		if err := dtoh(heap, s.heap); err != nil {
			return nil, err
		}
		out.Buffers = e.Buffers(heap)
	}
	out.DynamicRun = make([]int, e.Workers)
	stuck := false
	for w := 0; w < e.Workers; w++ {
		out.DynamicRun[w] = int(status[statusWords*w+4])
		if status[statusWords*w] != 1 {
			stuck = true
		}
	}
	out.Total = time.Since(t0)
	if opt.Trace && s.trace != 0 {
		tr := make([]uint64, 4*len(e.prog.Tasks))
		if err := dtoh(tr, s.trace); err != nil {
			return nil, err
		}
		out.Trace = make([]TaskTime, len(e.prog.Tasks))
		for i := range out.Trace {
			w := tr[4*i : 4*i+4]
			if w[2] == 0 {
				out.Trace[i] = TaskTime{Worker: -1}
				continue
			}
			out.Trace[i] = TaskTime{Wait: int64(w[0]), Start: int64(w[1]), End: int64(w[2]), Worker: int(w[3])}
		}
	}
	if stuck {
		st := append([]uint64(nil), status...)
		ctr, bar, sem := e.initialSync()
		for _, x := range []struct {
			dst []uint64
			src C.CUdeviceptr
		}{{ctr, s.ctr}, {bar, s.bar}, {sem, s.sm}} {
			if err := dtoh(x.dst, x.src); err != nil {
				return nil, err
			}
		}
		return out, e.deadlockError(st, ctr, bar, sem, opt.timeout())
	}
	return out, nil
}

// timeEmpty returns the mean time of n back-to-back empty launches.
func (d *Device) timeEmpty(n int) (time.Duration, error) {
	leave, err := d.enter()
	if err != nil {
		return 0, err
	}
	defer leave()
	C.mp_launch0(d.empty, d.stream)
	C.mp_stream_sync(d.stream)
	C.mp_event_record(d.ev0, d.stream)
	for i := 0; i < n; i++ {
		if err := check("cuLaunchKernel", C.mp_launch0(d.empty, d.stream)); err != nil {
			return 0, err
		}
	}
	C.mp_event_record(d.ev1, d.stream)
	if err := check("sync", C.mp_event_sync(d.ev1)); err != nil {
		return 0, err
	}
	var ms C.float
	C.mp_event_elapsed(&ms, d.ev0, d.ev1)
	return time.Duration(float64(ms) * 1e6 / float64(n)), nil
}

// baseline runs every task body of p as its own one-block launch on one
// stream, in task-list order (a valid order for the chain and fan-out
// programs it is used on), reps times, and then as one CUDA graph
// captured from those launches, reps times. It returns the event-timed
// durations and the buffers of the last stream and graph runs.
func (d *Device) baseline(p *schedule.Program, reps int) (stream, graph []time.Duration, sb, gb map[string][]byte, err error) {
	e, err := Encode(p)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	leave, err := d.enter()
	if err != nil {
		return nil, nil, nil, nil, err
	}
	defer leave()
	s, err := d.newSession(e)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	defer s.free()
	params := s.params
	launchAll := func() error {
		for t := range p.Tasks {
			if err := check("cuLaunchKernel", C.mp_launch(d.task, 1, 128, 0, d.stream, unsafe.Pointer(&params[0]), 0, 1, C.uint(t))); err != nil {
				return err
			}
		}
		return nil
	}
	timed := func(launch func() error) (time.Duration, error) {
		if err := s.reset(Options{}, d.stream); err != nil {
			return 0, err
		}
		C.mp_event_record(d.ev0, d.stream)
		if err := launch(); err != nil {
			return 0, err
		}
		C.mp_event_record(d.ev1, d.stream)
		if err := check("sync", C.mp_event_sync(d.ev1)); err != nil {
			return 0, err
		}
		var ms C.float
		C.mp_event_elapsed(&ms, d.ev0, d.ev1)
		return time.Duration(float64(ms) * 1e6), nil
	}
	heap := make([]byte, e.HeapBytes)
	for i := 0; i < reps; i++ {
		t, err := timed(launchAll)
		if err != nil {
			return nil, nil, nil, nil, err
		}
		stream = append(stream, t)
	}
	if err := dtoh(heap, s.heap); err != nil {
		return nil, nil, nil, nil, err
	}
	sb = e.Buffers(heap)
	if err := check("cuStreamBeginCapture", C.mp_capture_begin(d.stream)); err != nil {
		return nil, nil, nil, nil, err
	}
	lerr := launchAll()
	var g C.CUgraph
	if err := check("cuStreamEndCapture", C.mp_capture_end(d.stream, &g)); err != nil {
		return nil, nil, nil, nil, err
	}
	if lerr != nil {
		C.mp_graph_destroy(g)
		return nil, nil, nil, nil, lerr
	}
	defer C.mp_graph_destroy(g)
	var x C.CUgraphExec
	if err := check("cuGraphInstantiate", C.mp_graph_inst(&x, g)); err != nil {
		return nil, nil, nil, nil, err
	}
	defer C.mp_graph_exec_destroy(x)
	for i := 0; i < reps; i++ {
		t, err := timed(func() error { return check("cuGraphLaunch", C.mp_graph_launch(x, d.stream)) })
		if err != nil {
			return nil, nil, nil, nil, err
		}
		graph = append(graph, t)
	}
	if err := dtoh(heap, s.heap); err != nil {
		return nil, nil, nil, nil, err
	}
	return stream, graph, sb, e.Buffers(heap), nil
}

// Resident is a data heap kept on the device across runs of programs that
// share one buffer layout, such as the decode steps of one model at
// successive positions: weights are uploaded once, state (the KV cache)
// carries over from run to run, and the host reads and writes single
// buffers (the token in, the next token out).
type Resident struct {
	d        *Device
	layout   *Encoded // the encoding the heap was laid out for
	heap     C.CUdeviceptr
	mem      devMem
	sessions map[*Encoded]*session
	closed   bool
	// stage is pinned host memory for RunIO's token traffic.
	stage      unsafe.Pointer
	stageBytes int
}

// NewResident allocates the heap of e on the device and fills it: every
// byte o.Poison, then the initialized buffers from o.Init (or the byte
// pattern), one buffer at a time.
func (d *Device) NewResident(e *Encoded, o Options) (*Resident, error) {
	leave, err := d.enter()
	if err != nil {
		return nil, err
	}
	defer leave()
	r := &Resident{d: d, layout: e, sessions: map[*Encoded]*session{}}
	if r.heap, err = r.mem.alloc(int(e.HeapBytes)); err != nil {
		return nil, err
	}
	fail := func(err error) (*Resident, error) { r.mem.free(); return nil, err }
	if err := check("cuMemsetD8", C.mp_memset(r.heap, C.uchar(o.Poison), C.size_t(e.HeapBytes))); err != nil {
		return fail(err)
	}
	p := e.prog
	for i, b := range p.Buffers {
		if !b.Kind.Initialized() || b.Size == 0 {
			continue
		}
		buf := make([]byte, b.Size)
		if o.Init != nil {
			if err := o.Init.Fill(p, i, buf); err != nil {
				return fail(err)
			}
		} else {
			for j := range buf {
				buf[j] = initByte(i, uint64(j))
			}
		}
		if err := htod(r.heap+C.CUdeviceptr(e.BufferAddr[i]), buf); err != nil {
			return fail(err)
		}
	}
	return r, nil
}

// sameLayout reports whether e's buffers are the resident heap's.
func (r *Resident) sameLayout(e *Encoded) error {
	a, b := r.layout, e
	if a.HeapBytes != b.HeapBytes || len(a.BufferAddr) != len(b.BufferAddr) {
		return fmt.Errorf("runner: program %q does not have the resident heap's layout (%d bytes, %d buffers; resident %d, %d)", b.prog.Name, b.HeapBytes, len(b.BufferAddr), a.HeapBytes, len(a.BufferAddr))
	}
	for i := range a.BufferAddr {
		x, y := a.prog.Buffers[i], b.prog.Buffers[i]
		if a.BufferAddr[i] != b.BufferAddr[i] || x.Name != y.Name || x.Size != y.Size {
			return fmt.Errorf("runner: program %q: buffer %d (%q, %d bytes) differs from the resident heap's (%q, %d bytes)", b.prog.Name, i, y.Name, y.Size, x.Name, x.Size)
		}
	}
	return nil
}

// Run executes e once on the resident heap (which it changes in place) and
// returns the outcome without buffers. e must come from [Prepare] (a
// program verify calls safe) unless o.AllowUnsafe, and have the heap's
// layout. Its tables stay on the device for later runs of e.
func (r *Resident) Run(e *Encoded, o Options) (*Outcome, error) {
	if !e.verified && !o.AllowUnsafe {
		return nil, fmt.Errorf("%w: program %q was not prepared with Prepare", ErrUnverified, e.prog.Name)
	}
	if err := r.sameLayout(e); err != nil {
		return nil, err
	}
	leave, err := r.d.enter()
	if err != nil {
		return nil, err
	}
	defer leave()
	if r.closed {
		return nil, errors.New("runner: resident heap closed")
	}
	t0 := time.Now()
	s, err := r.session(e)
	if err != nil {
		return nil, err
	}
	if err := s.resetSync(o, r.d.stream); err != nil {
		return nil, err
	}
	return r.d.launch(s, o, t0, false, nil)
}

// session returns e's tables on the device, uploading them on first use.
// The caller holds the device.
func (r *Resident) session(e *Encoded) (*session, error) {
	if s := r.sessions[e]; s != nil {
		return s, nil
	}
	s, err := r.d.newSessionOn(e, r.heap)
	if err != nil {
		return nil, err
	}
	r.sessions[e] = s
	return s, nil
}

// Load uploads the tables of e (instructions, tasks, accesses, initial
// sync state) so that its first run pays no upload. Like Run it requires a
// program from [Prepare] unless o.AllowUnsafe.
func (r *Resident) Load(e *Encoded, o Options) error {
	if !e.verified && !o.AllowUnsafe {
		return fmt.Errorf("%w: program %q was not prepared with Prepare", ErrUnverified, e.prog.Name)
	}
	if err := r.sameLayout(e); err != nil {
		return err
	}
	leave, err := r.d.enter()
	if err != nil {
		return err
	}
	defer leave()
	if r.closed {
		return errors.New("runner: resident heap closed")
	}
	s, err := r.session(e)
	if err != nil {
		return err
	}
	return s.ensurePristine(o)
}

// ensurePristine builds the pristine sync state for o's permutation
// options unless the one kept was built for the same ones.
func (s *session) ensurePristine(o Options) error {
	k := permKey{o.Permute, o.Seed}
	if !o.Permute {
		k.seed = 0
	}
	if s.pristineFor == nil || *s.pristineFor != k {
		if err := s.buildPristine(o); err != nil {
			return err
		}
		s.pristineFor = &k
	}
	return nil
}

// RunIO is Run with the step's buffer traffic on the run's stream: the
// bytes of in are written to buffer inName before the launch and buffer
// outName is read into out after it (each may be empty), through pinned
// host memory, with one wait for the whole step.
func (r *Resident) RunIO(e *Encoded, o Options, inName string, in []byte, outName string, out []byte) (*Outcome, error) {
	if !e.verified && !o.AllowUnsafe {
		return nil, fmt.Errorf("%w: program %q was not prepared with Prepare", ErrUnverified, e.prog.Name)
	}
	if err := r.sameLayout(e); err != nil {
		return nil, err
	}
	io := &stepIO{inBytes: len(in), outBytes: len(out)}
	if len(in) > 0 {
		addr, size, err := r.buffer(inName)
		if err != nil {
			return nil, err
		}
		if uint64(len(in)) != size {
			return nil, fmt.Errorf("runner: buffer %q has %d bytes, not %d", inName, size, len(in))
		}
		io.inDst = r.heap + C.CUdeviceptr(addr)
	}
	if len(out) > 0 {
		addr, size, err := r.buffer(outName)
		if err != nil {
			return nil, err
		}
		if uint64(len(out)) != size {
			return nil, fmt.Errorf("runner: buffer %q has %d bytes, not %d", outName, size, len(out))
		}
		io.outSrc = r.heap + C.CUdeviceptr(addr)
	}
	leave, err := r.d.enter()
	if err != nil {
		return nil, err
	}
	defer leave()
	if r.closed {
		return nil, errors.New("runner: resident heap closed")
	}
	t0 := time.Now()
	need := (len(in)+15)&^15 + len(out)
	if need > r.stageBytes {
		if r.stage != nil {
			C.mp_host_free(r.stage)
			r.stage, r.stageBytes = nil, 0
		}
		var hp unsafe.Pointer
		if err := check("cuMemHostAlloc", C.mp_host_alloc(&hp, C.size_t(max(need, 4096)))); err != nil {
			return nil, err
		}
		r.stage, r.stageBytes = hp, max(need, 4096)
	}
	stage := unsafe.Slice((*byte)(r.stage), r.stageBytes)
	copy(stage, in)
	io.in = r.stage
	io.out = unsafe.Pointer(&stage[(len(in)+15)&^15])
	s, err := r.session(e)
	if err != nil {
		return nil, err
	}
	if err := s.resetSync(o, r.d.stream); err != nil {
		return nil, err
	}
	res, err := r.d.launch(s, o, t0, false, io)
	if err != nil {
		return res, err
	}
	copy(out, stage[(len(in)+15)&^15:])
	return res, nil
}

// Forget frees the device tables of e (its heap effects stay).
func (r *Resident) Forget(e *Encoded) {
	leave, err := r.d.enter()
	if err != nil {
		return
	}
	defer leave()
	if s := r.sessions[e]; s != nil {
		s.free()
		delete(r.sessions, e)
	}
}

func (r *Resident) buffer(name string) (uint64, uint64, error) {
	for i, b := range r.layout.prog.Buffers {
		if b.Name == name {
			return r.layout.BufferAddr[i], b.Size, nil
		}
	}
	return 0, 0, fmt.Errorf("runner: no buffer %q", name)
}

// Read returns the current bytes of the named buffer.
func (r *Resident) Read(name string) ([]byte, error) {
	addr, size, err := r.buffer(name)
	if err != nil {
		return nil, err
	}
	leave, err := r.d.enter()
	if err != nil {
		return nil, err
	}
	defer leave()
	out := make([]byte, size)
	return out, dtoh(out, r.heap+C.CUdeviceptr(addr))
}

// Write replaces the bytes of the named buffer; data must have its size.
func (r *Resident) Write(name string, data []byte) error {
	addr, size, err := r.buffer(name)
	if err != nil {
		return err
	}
	if uint64(len(data)) != size {
		return fmt.Errorf("runner: buffer %q has %d bytes, not %d", name, size, len(data))
	}
	leave, err := r.d.enter()
	if err != nil {
		return err
	}
	defer leave()
	return htod(r.heap+C.CUdeviceptr(addr), data)
}

// Close frees the heap and every program's tables.
func (r *Resident) Close() error {
	leave, err := r.d.enter()
	if err != nil {
		return err
	}
	defer leave()
	if r.closed {
		return nil
	}
	r.closed = true
	for _, s := range r.sessions {
		s.free()
	}
	r.mem.free()
	if r.stage != nil {
		C.mp_host_free(r.stage)
		r.stage = nil
	}
	return nil
}
