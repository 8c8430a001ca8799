/**
 * One way to register a tool: its zod input and output shapes, a run that returns a short text for
 * people and the structured result, and every failure turned into an MCP tool error with a hint.
 */
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { CallToolResult, ToolAnnotations } from "@modelcontextprotocol/sdk/types.js";
import type { z } from "zod";
import { toolError } from "../error-hints.js";

type Shape = Record<string, z.ZodType>;

export interface ToolSpec<I extends Shape, O extends Shape> {
  name: string;
  title: string;
  description: string;
  input: I;
  output: O;
  annotations?: ToolAnnotations;
}

/** What a tool's run returns: a line or two for people, and the structured result. */
export interface ToolAnswer<O extends Shape> {
  text: string;
  data: z.infer<z.ZodObject<O>>;
}

/** Registers `spec` on `server`, answering with `run`. */
export function defineTool<I extends Shape, O extends Shape>(
  server: McpServer,
  spec: ToolSpec<I, O>,
  run: (args: z.infer<z.ZodObject<I>>) => Promise<ToolAnswer<O>>,
): void {
  const callback = async (args: unknown): Promise<CallToolResult> => {
    try {
      const answer = await run(args as z.infer<z.ZodObject<I>>);
      return {
        content: [{ type: "text", text: answer.text }],
        structuredContent: answer.data as Record<string, unknown>,
      };
    } catch (error) {
      return toolError(error);
    }
  };
  server.registerTool(
    spec.name,
    {
      title: spec.title,
      description: spec.description,
      inputSchema: spec.input,
      outputSchema: spec.output,
      ...(spec.annotations ? { annotations: spec.annotations } : {}),
    },
    callback as never,
  );
}

/** Annotations of a tool that only reads. */
export const READ_ONLY: ToolAnnotations = { readOnlyHint: true, openWorldHint: false };
