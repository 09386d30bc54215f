package concentrate

import (
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation"
	kjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"
)

// DefaultLabelKey is the label whose value groups pods together when the profile
// does not set labelKey.
const DefaultLabelKey = "app"

// Args are Concentrate's arguments, read from the profile's pluginConfig:
//
//	pluginConfig:
//	- name: Concentrate
//	  args:
//	    labelKey: app            # default "app"; must be a valid label key
//	    rejectEverything: false  # default false; true makes Filter reject every node
type Args struct {
	// LabelKey names the pod label whose value the incoming pod shares with the
	// pods it wants to be placed next to.
	LabelKey string `json:"labelKey,omitempty"`
	// RejectEverything makes Filter mark every node Unschedulable.
	RejectEverything bool `json:"rejectEverything,omitempty"`
}

// SetDefaults fills unset fields with their defaults.
func (a *Args) SetDefaults() {
	if a.LabelKey == "" {
		a.LabelKey = DefaultLabelKey
	}
}

// Validate reports the first invalid field, naming it.
func (a *Args) Validate() error {
	if errs := validation.IsQualifiedName(a.LabelKey); len(errs) > 0 {
		return fmt.Errorf("Concentrate args: labelKey %q is not a valid label key: %v", a.LabelKey, errs)
	}
	return nil
}

// DecodeArgs turns the pluginConfig args handed to the plugin factory into Args,
// defaulted and validated. nil (no pluginConfig entry) gives the defaults. Out-of-tree
// plugin args arrive as *runtime.Unknown; they are decoded strictly (unknown fields
// and wrong types are errors naming the field).
func DecodeArgs(obj runtime.Object) (*Args, error) {
	args := &Args{}
	switch o := obj.(type) {
	case nil:
	case *Args:
		if o != nil {
			*args = *o
		}
	case *runtime.Unknown:
		if len(o.Raw) > 0 {
			if err := decodeStrict(o.Raw, o.ContentType, args); err != nil {
				return nil, fmt.Errorf("Concentrate args: %w", err)
			}
		}
	default:
		return nil, fmt.Errorf("Concentrate args: want *runtime.Unknown or *concentrate.Args, got %T", obj)
	}
	args.SetDefaults()
	if err := args.Validate(); err != nil {
		return nil, err
	}
	return args, nil
}

func decodeStrict(raw []byte, contentType string, into *Args) error {
	switch contentType {
	case runtime.ContentTypeJSON, "":
	case runtime.ContentTypeYAML:
		j, err := yaml.YAMLToJSON(raw)
		if err != nil {
			return err
		}
		raw = j
	default:
		return fmt.Errorf("unsupported content type %q", contentType)
	}
	// Case-sensitive field names, unknown and duplicate fields are errors.
	strictErrs, err := kjson.UnmarshalStrict(raw, into)
	if err != nil {
		return err
	}
	return errors.Join(strictErrs...)
}

// DeepCopyObject and GetObjectKind make *Args a runtime.Object so that tests (and
// callers building a framework in-process) can pass typed args to New.
func (a *Args) DeepCopyObject() runtime.Object {
	if a == nil {
		return nil
	}
	c := *a
	return &c
}

// GetObjectKind implements runtime.Object; Args carries no type metadata.
func (a *Args) GetObjectKind() schema.ObjectKind { return schema.EmptyObjectKind }
