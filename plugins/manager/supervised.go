package manager

import (
	"context"

	"github.com/harvest-platform/harvest/plugins/base"
	"github.com/harvest-platform/harvest/plugins/historyimporter"
	"github.com/harvest-platform/harvest/plugins/usagesource"
)

// supervised answers what every plugin answers (base.Base) from the
// running plugin; each plugin type's supervised form embeds it.
type supervised[T base.Base] struct{ in *instance[T] }

// SetConfig replaces the config, now and for every restart.
func (s supervised[T]) SetConfig(config map[string]string) error {
	return s.in.setConfig(config)
}

// PluginInfo asks the running plugin.
func (s supervised[T]) PluginInfo() (*base.PluginInfo, error) {
	impl, gen, err := s.in.get()
	if err != nil {
		return nil, err
	}
	info, err := impl.PluginInfo()
	s.in.report(context.Background(), gen, err)
	return info, err
}

// supervisedSource is what a component gets for an external usage source:
// each call goes to the running plugin and its outcome to the supervisor.
type supervisedSource struct{ supervised[usagesource.Source] }

var _ usagesource.Source = (*supervisedSource)(nil)

// Sample asks the running plugin; ErrPluginDown while it is down.
func (s *supervisedSource) Sample(ctx context.Context) (usagesource.Usage, error) {
	impl, gen, err := s.in.get()
	if err != nil {
		return usagesource.Usage{}, err
	}
	u, err := impl.Sample(ctx)
	s.in.report(ctx, gen, err)
	return u, err
}

// supervisedImporter is what a component gets for an external history
// importer.
type supervisedImporter struct {
	supervised[historyimporter.Importer]
}

var _ historyimporter.Importer = (*supervisedImporter)(nil)

// Import streams from the running plugin. A crash or hang mid-stream returns
// its error (after the records that arrived) and restarts the plugin; the
// caller decides whether to import again. An error of emit's own is returned
// as it is and does not count against the plugin.
func (s *supervisedImporter) Import(ctx context.Context, r historyimporter.Range, tenants []string, emit func(historyimporter.Record) error) error {
	impl, gen, err := s.in.get()
	if err != nil {
		return err
	}
	var emitErr error
	err = impl.Import(ctx, r, tenants, func(rec historyimporter.Record) error {
		emitErr = emit(rec)
		return emitErr
	})
	if err != nil && err != emitErr {
		s.in.report(ctx, gen, err)
	}
	return err
}
