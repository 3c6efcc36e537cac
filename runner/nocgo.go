//go:build !cgo

package runner

import (
	"context"
	"time"

	"github.com/megaproof/megaproof/schedule"
)

// Device is one CUDA device with the interpreter kernel loaded. In a build
// without cgo no device can be opened.
type Device struct{}

// Info describes an opened device.
type Info struct {
	Name          string
	SMs           int
	Arch          string
	Driver        int
	NVRTC         string
	Cooperative   bool
	Compile       time.Duration
	CompileCached bool
	Fallback      string
}

// Open returns ErrNoCGO: this build has no cgo.
func Open() (*Device, error) { return nil, ErrNoCGO }

// Info describes the device.
func (d *Device) Info() Info { return Info{} }

// Close does nothing.
func (d *Device) Close() error { return nil }

// Run returns ErrNoCGO: this build has no cgo.
func (d *Device) Run(ctx context.Context, p *schedule.Program, opt Options) (*Outcome, error) {
	return nil, ErrNoCGO
}

// Resident is a data heap kept on the device across runs. In a build
// without cgo none can be made.
type Resident struct{}

// NewResident returns ErrNoCGO: this build has no cgo.
func (d *Device) NewResident(e *Encoded, o Options) (*Resident, error) { return nil, ErrNoCGO }

// Run returns ErrNoCGO.
func (r *Resident) Run(e *Encoded, o Options) (*Outcome, error) { return nil, ErrNoCGO }

// Load returns ErrNoCGO.
func (r *Resident) Load(e *Encoded, o Options) error { return ErrNoCGO }

// RunIO returns ErrNoCGO.
func (r *Resident) RunIO(e *Encoded, o Options, inName string, in []byte, outName string, out []byte) (*Outcome, error) {
	return nil, ErrNoCGO
}

// Forget does nothing.
func (r *Resident) Forget(e *Encoded) {}

// Read returns ErrNoCGO.
func (r *Resident) Read(name string) ([]byte, error) { return nil, ErrNoCGO }

// Write returns ErrNoCGO.
func (r *Resident) Write(name string, data []byte) error { return ErrNoCGO }

// Close does nothing.
func (r *Resident) Close() error { return nil }
