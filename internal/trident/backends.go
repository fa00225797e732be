package trident

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
)

// Offer is a TridentBackend as a class without a driver reaches it: the
// backend, and the labels of each pool it offers.
type Offer struct {
	Backend Backend
	// Pools are the label sets a class's selector is matched against:
	// each virtual pool's labels over the backend's own (config.storage[],
	// config.labels), or the backend's own alone when it has no virtual
	// pool.
	Pools []map[string]string
}

// OfferFrom reads a TridentBackend's offer from the content of an
// unstructured object. Labels that are not strings are left out.
func OfferFrom(obj map[string]any) Offer {
	o := Offer{Backend: BackendFrom(obj)}
	dc := driverConfig(mapAt(obj, "config"))
	own := stringMap(mapAt(dc, "labels"))
	pools, _ := dc["storage"].([]any)
	for _, p := range pools {
		vp, ok := p.(map[string]any)
		if !ok {
			continue
		}
		labels := map[string]string{}
		for k, v := range own {
			labels[k] = v
		}
		for k, v := range stringMap(mapAt(vp, "labels")) {
			labels[k] = v
		}
		o.Pools = append(o.Pools, labels)
	}
	if len(o.Pools) == 0 {
		o.Pools = []map[string]string{own}
	}
	return o
}

func stringMap(m map[string]any) map[string]string {
	out := map[string]string{}
	for k, v := range m {
		if s, ok := v.(string); ok {
			out[k] = s
		}
	}
	return out
}

// selectable says whether a class with params may place a volume on the
// offer, as Trident chooses pools: a backend named by its
// additionalStoragePools (or requiredStorage, its older name) is
// selectable whatever else the class says; otherwise, when the class lists
// storagePools, one entry must name the backend, and when it has a
// selector, one of the backend's pools must match it. Lists are
// "backend:pool,pool;backend:pool", backend names regular expressions.
// known is false when the class's lists or selector cannot be read (Trident
// then ignores or refuses them, and may choose more): nothing is concluded.
func (o Offer) selectable(params map[string]string) (ok, known bool) {
	for _, key := range []string{"additionalStoragePools", "requiredStorage"} {
		named, err := namesBackend(Param(params, key), o.Backend.Name)
		if err != nil {
			return false, false
		}
		if named {
			return true, true
		}
	}
	if pools := Param(params, "storagePools"); pools != "" {
		named, err := namesBackend(pools, o.Backend.Name)
		switch {
		case err != nil:
			return false, false
		case !named:
			return false, true
		}
	}
	selector := Param(params, "selector")
	if selector == "" {
		return true, true
	}
	if _, err := ParseSelector(selector); err != nil {
		return false, false
	}
	for _, labels := range o.Pools {
		if SelectorMatches(selector, labels) {
			return true, true
		}
	}
	return false, true
}

// namesBackend says whether a pool list names backend, matching each
// entry's backend name as Trident does ("^" + name + "$", ungrouped). A
// list Trident would not read (an empty entry, an entry without a backend
// or without pools, a name that is not a regular expression) is an error.
func namesBackend(list, backend string) (bool, error) {
	if strings.TrimSpace(list) == "" {
		return false, nil
	}
	named := false
	for _, entry := range strings.Split(list, ";") {
		name, pools, ok := strings.Cut(strings.TrimSpace(entry), ":")
		name = strings.TrimSpace(name)
		if !ok || name == "" || strings.TrimSpace(pools) == "" {
			return false, fmt.Errorf("storage pool list entry %q is not backend:pools", entry)
		}
		re, err := regexp.Compile("^" + name + "$")
		if err != nil {
			return false, err
		}
		named = named || re.MatchString(backend)
	}
	return named, nil
}

// PreflightOffers checks a request on a Trident class that names no
// driver against the backends it can select: when there is at least one,
// every one of them has a driver this package knows, and none can serve
// the request, it is refused (the claim would stay Pending until the bind
// timeout). Otherwise, or when the class's pool lists cannot be read, it
// returns nil: Trident decides.
func PreflightOffers(params map[string]string, offers []Offer, req Request) *Finding {
	var names []string
	for _, o := range offers {
		ok, known := o.selectable(params)
		if !known {
			return nil
		}
		if !ok {
			continue
		}
		info, knownDriver := drivers[o.Backend.Driver]
		if !knownDriver || unsupported(o.Backend.Driver, info, req) == nil {
			return nil
		}
		names = append(names, fmt.Sprintf("%s (%s)", o.Backend.Name, o.Backend.Driver))
	}
	if len(names) == 0 {
		return nil
	}
	sort.Strings(names)
	what := "volumeMode Block"
	if !req.block() {
		what = "a Filesystem volume on several nodes"
	}
	return &Finding{Reason: ReasonUnsupportedByDriver, Message: fmt.Sprintf("the class names no Trident driver, and no backend it can select serves %s: %s; "+
		"use a class whose backends can (a SAN driver such as %s for Block, an NFS driver such as %s for a shared Filesystem)",
		what, strings.Join(names, ", "), OntapSAN, OntapNAS)}
}
