package k8stest

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	lua "github.com/yuin/gopher-lua"
	"k8s.io/apimachinery/pkg/runtime"
)

// ArgoHealth runs the chart's Argo CD health check for kind
// (charts/storagebench/files/health/<kind>.lua, from the repository root
// root) on obj as Argo CD does: obj as a Lua table in the global "obj",
// the script returning a table with status and message.
func ArgoHealth(root, kind string, obj runtime.Object) (status, message string, err error) {
	script, err := os.ReadFile(filepath.Join(root, "charts", "storagebench", "files", "health", strings.ToLower(kind)+".lua"))
	if err != nil {
		return "", "", err
	}
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return "", "", err
	}
	state := lua.NewState()
	defer state.Close()
	state.SetGlobal("obj", luaValue(state, m))
	if err := state.DoString(string(script)); err != nil {
		return "", "", err
	}
	hs, ok := state.Get(-1).(*lua.LTable)
	if !ok {
		return "", "", fmt.Errorf("%s.lua returned %s, not a table", kind, state.Get(-1).Type())
	}
	return lua.LVAsString(hs.RawGetString("status")), lua.LVAsString(hs.RawGetString("message")), nil
}

// luaValue converts an unstructured value as Argo CD's JSON decoding does:
// objects and arrays become tables (arrays from index 1).
func luaValue(state *lua.LState, v any) lua.LValue {
	switch x := v.(type) {
	case map[string]any:
		t := state.NewTable()
		for k, e := range x {
			t.RawSetString(k, luaValue(state, e))
		}
		return t
	case []any:
		t := state.NewTable()
		for _, e := range x {
			t.Append(luaValue(state, e))
		}
		return t
	case string:
		return lua.LString(x)
	case bool:
		return lua.LBool(x)
	case int64:
		return lua.LNumber(x)
	case float64:
		return lua.LNumber(x)
	case nil:
		return lua.LNil
	default:
		return lua.LString(fmt.Sprint(x))
	}
}
