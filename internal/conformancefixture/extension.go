package conformancefixture

import (
	"context"
	"encoding/base64"
	"fmt"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/mcpadapter"
)

// The suite's resources, by URI.
const (
	StaticText   = "test://static-text"
	StaticBinary = "test://static-binary"
	Watched      = "test://watched-resource"
	Template     = "test://template/{id}/data"
)

// Extension serves the suite's resources, resource template and prompts at every MCP
// endpoint, and the tool and prompt the diagnostic tools change (stateless.go);
// test://watched-resource may be subscribed to.
func Extension() mcpadapter.Extension {
	return mcpadapter.Extension{
		Name:      Provider,
		Resources: func(context.Context, mcpadapter.Scope) ([]server.ServerResource, error) { return resources(), nil },
		ResourceTemplates: func(context.Context, mcpadapter.Scope) ([]server.ServerResourceTemplate, error) {
			return templates(), nil
		},
		Prompts: func(context.Context, mcpadapter.Scope) ([]server.ServerPrompt, error) {
			return append(prompts(), dynamicPrompt()), nil
		},
		Tools:        func(context.Context, mcpadapter.Scope) ([]server.ServerTool, error) { return dynamicTools(), nil },
		Subscribable: func(_ context.Context, _ mcpadapter.Scope, uri string) bool { return uri == Watched },
	}
}

func textResource(uri, mime, text string) server.ResourceHandlerFunc {
	return func(context.Context, mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
		return []mcp.ResourceContents{mcp.TextResourceContents{URI: uri, MIMEType: mime, Text: text}}, nil
	}
}

func resources() []server.ServerResource {
	return []server.ServerResource{
		{Resource: mcp.NewResource(StaticText, "static-text", mcp.WithResourceDescription("A fixed text resource."), mcp.WithMIMEType("text/plain")),
			Handler: textResource(StaticText, "text/plain", "This is the content of the static text resource.")},
		{Resource: mcp.NewResource(StaticBinary, "static-binary", mcp.WithResourceDescription("A fixed binary resource (a PNG image)."), mcp.WithMIMEType("image/png")),
			Handler: func(context.Context, mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
				return []mcp.ResourceContents{mcp.BlobResourceContents{URI: StaticBinary, MIMEType: "image/png", Blob: base64.StdEncoding.EncodeToString(PNG)}}, nil
			}},
		{Resource: mcp.NewResource(Watched, "watched-resource", mcp.WithResourceDescription("A resource that may be subscribed to."), mcp.WithMIMEType("text/plain")),
			Handler: textResource(Watched, "text/plain", "Watched resource content")},
	}
}

func templates() []server.ServerResourceTemplate {
	t := mcp.NewResourceTemplate(Template, "template-data", mcp.WithTemplateDescription("Data for an ID, substituted into the URI."),
		mcp.WithTemplateMIMEType("application/json"))
	return []server.ServerResourceTemplate{{Template: t, Handler: func(_ context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
		id, ok := strings.CutPrefix(req.Params.URI, "test://template/")
		id, ok2 := strings.CutSuffix(id, "/data")
		if !ok || !ok2 || id == "" || strings.Contains(id, "/") {
			return nil, switchboard.NotFound("resource " + req.Params.URI)
		}
		return []mcp.ResourceContents{mcp.TextResourceContents{URI: req.Params.URI, MIMEType: "application/json",
			Text: fmt.Sprintf(`{"id":%q,"templateTest":true,"data":"Data for ID: %s"}`, id, id)}}, nil
	}}}
}

func user(c mcp.Content) mcp.PromptMessage { return mcp.NewPromptMessage(mcp.RoleUser, c) }

func prompts() []server.ServerPrompt {
	return []server.ServerPrompt{
		{Prompt: mcp.NewPrompt("test_simple_prompt", mcp.WithPromptDescription("A prompt without arguments.")),
			Handler: func(context.Context, mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
				return mcp.NewGetPromptResult("", []mcp.PromptMessage{user(mcp.NewTextContent("This is a simple prompt for testing."))}), nil
			}},
		{Prompt: mcp.NewPrompt("test_prompt_with_arguments", mcp.WithPromptDescription("A prompt with two arguments."),
			mcp.WithArgument("arg1", mcp.ArgumentDescription("First test argument"), mcp.RequiredArgument()),
			mcp.WithArgument("arg2", mcp.ArgumentDescription("Second test argument"), mcp.RequiredArgument())),
			Handler: func(_ context.Context, req mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
				a := req.Params.Arguments
				return mcp.NewGetPromptResult("", []mcp.PromptMessage{user(mcp.NewTextContent(
					fmt.Sprintf("Prompt with arguments: arg1='%s', arg2='%s'", a["arg1"], a["arg2"])))}), nil
			}},
		{Prompt: mcp.NewPrompt("test_prompt_with_embedded_resource", mcp.WithPromptDescription("A prompt that embeds a resource."),
			mcp.WithArgument("resourceUri", mcp.ArgumentDescription("URI of the resource to embed"), mcp.RequiredArgument())),
			Handler: func(_ context.Context, req mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
				uri := req.Params.Arguments["resourceUri"]
				if uri == "" {
					return nil, switchboard.Invalid("resourceUri", "is required")
				}
				return mcp.NewGetPromptResult("", []mcp.PromptMessage{
					user(mcp.NewEmbeddedResource(mcp.TextResourceContents{URI: uri, MIMEType: "text/plain", Text: "Embedded resource content for testing."})),
					user(mcp.NewTextContent("Please process the embedded resource above.")),
				}), nil
			}},
		{Prompt: mcp.NewPrompt("test_prompt_with_image", mcp.WithPromptDescription("A prompt with an image.")),
			Handler: func(context.Context, mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
				return mcp.NewGetPromptResult("", []mcp.PromptMessage{
					user(mcp.NewImageContent(base64.StdEncoding.EncodeToString(PNG), "image/png")),
					user(mcp.NewTextContent("Please analyze the image above.")),
				}), nil
			}},
		inputRequiredPrompt(),
	}
}
