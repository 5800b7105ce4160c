import { createServer } from "node:net";

/** The port the launcher was told to use is taken: said in one line, with the two commands that pick another. */
export class PortInUseError extends Error {
  constructor(host: string, port: number) {
    const next = port === 65535 ? port - 1 : port + 1;
    super(
      `${host}:${port}: Address already in use (another capvault?); start on another port with ` +
        `\`PORT=${next} npm start\` or \`npm start -- --port ${next}\``,
    );
  }
}

/**
 * Fails with {@link PortInUseError} when `host:port` cannot be bound, before
 * any token is generated or any child started. A port taken between this
 * probe and workerd's bind still fails the start; it is then reported the
 * same way (see {@link isAddressInUse}).
 */
export async function assertPortFree(host: string, port: number): Promise<void> {
  if (port === 0) return;
  const free = await new Promise<boolean>((resolve) => {
    const probe = createServer();
    probe.once("error", (err: NodeJS.ErrnoException) => resolve(err.code !== "EADDRINUSE"));
    probe.listen({ port, host: host === "*" ? "0.0.0.0" : host, exclusive: true }, () =>
      probe.close(() => resolve(true)),
    );
  });
  if (!free) throw new PortInUseError(host, port);
}

/** Miniflare's own error for a port workerd could not bind. */
export function isAddressInUse(error: unknown): boolean {
  return (error as { code?: unknown } | null)?.code === "ERR_ADDRESS_IN_USE";
}
