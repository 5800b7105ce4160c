import { assertCapIdShape } from "../../clients/typescript/cap-id.ts";
import { capFromInput } from "../cap-source.ts";
import { writeOut } from "../cli-io.ts";
import type { CommandSpec } from "../command-spec.ts";
import { printJson } from "../json-output.ts";
import { positionalArgs, stringOption } from "../option-values.ts";
import { terminalSafe } from "../terminal-safe.ts";
import { UsageError } from "../usage-error.ts";

export const revokeCommand: CommandSpec = {
  name: "revoke",
  summary: "revoke a cap (or one of its children) and everything minted from it",
  usage: "revoke [CAP] --self | --child ID",
  description:
    "--self: revokes CAP itself and all its descendants; it stops working at once.\n" +
    "--child ID: revokes that child of CAP (ids from `capvault children`), needs the subdir right.\n" +
    "One of the two is required: with a root cap in CAPVAULT_CAP a bare revoke would end everything.\n" +
    "Files are never touched by revocation.",
  options: {
    self: { type: "boolean", help: "revoke CAP itself and everything minted from it" },
    child: { type: "string", value: "ID", help: "revoke this child of CAP instead" },
  },
  async run(input) {
    const { cap, rest } = capFromInput(input, "revoke");
    positionalArgs(rest, { required: [] }, "revoke");
    const childId = stringOption(input.values.child);
    const self = input.values.self === true;
    if (self === (childId !== undefined)) {
      throw new UsageError(
        self
          ? "give one target: --self or --child ID, not both"
          : "say what to revoke: --self (CAP and everything minted from it) or --child ID (ids from `capvault children`)",
        "revoke",
      );
    }
    if (childId !== undefined) {
      try {
        assertCapIdShape(childId);
      } catch {
        throw new UsageError("--child takes a cap id as shown by `capvault children`", "revoke");
      }
      await cap.revokeChild(childId);
      if (input.json) await printJson(input.io, { revoked: childId, complete: true });
      else await writeOut(input.io.stdout, `revoked child ${childId}\n`);
      return;
    }
    // Learn the id first: after revocation the cap cannot say who it was.
    const { id } = await cap.info();
    const result = await cap.revoke();
    if (input.json) {
      await printJson(input.io, { revoked: id, ...result });
    } else {
      const pending = result.complete ? "" : "; the vault is still revoking some descendants in the background";
      await writeOut(input.io.stdout, `revoked ${terminalSafe(id)}${pending}\n`);
    }
  },
};
