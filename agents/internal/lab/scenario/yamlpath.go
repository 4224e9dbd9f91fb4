package scenario

// The YAML line a problem's path points at, so a refusal names the line to fix.

import (
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// lineOf finds the line of a path such as "links[2].a_to_b.loss" in the YAML tree; it
// falls back to the nearest ancestor that exists.
func lineOf(root *yaml.Node, path string) int {
	node := root
	if node.Kind == yaml.DocumentNode && len(node.Content) > 0 {
		node = node.Content[0]
	}
	line := node.Line
	for _, part := range splitPath(path) {
		next := child(node, part)
		if next == nil {
			break
		}
		node, line = next, next.Line
	}
	return line
}

func splitPath(path string) []string {
	var parts []string
	for _, dotted := range strings.Split(path, ".") {
		name, rest, _ := strings.Cut(dotted, "[")
		if name != "" {
			parts = append(parts, name)
		}
		for rest != "" {
			var index string
			index, rest, _ = strings.Cut(rest, "]")
			parts = append(parts, "["+index+"]")
			rest = strings.TrimPrefix(rest, "[")
		}
	}
	return parts
}

func child(node *yaml.Node, part string) *yaml.Node {
	if strings.HasPrefix(part, "[") {
		i, err := strconv.Atoi(strings.Trim(part, "[]"))
		if node.Kind != yaml.SequenceNode || err != nil || i < 0 || i >= len(node.Content) {
			return nil
		}
		return node.Content[i]
	}
	if node.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(node.Content); i += 2 {
		if node.Content[i].Value == part {
			return node.Content[i+1]
		}
	}
	return nil
}
