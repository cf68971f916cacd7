import { createServer, type AddressInfo, type Server } from 'node:net';

export interface SmtpSink {
  server: Server;
  port: number;
  /** Every message's text, in arrival order. */
  messages: string[];
  /** The code in the latest message to `to`. */
  latestCode(to: string): string;
}

/** A loopback SMTP server that accepts every message and keeps its text. */
export function smtpSink(): Promise<SmtpSink> {
  const messages: string[] = [];
  const server = createServer((socket) => {
    let data: string | undefined;
    socket.write('220 sink ready\r\n');
    socket.on('data', (chunk) => {
      for (const line of chunk.toString().split('\r\n')) {
        if (data !== undefined) {
          if (line === '.') {
            messages.push(data);
            data = undefined;
            socket.write('250 queued\r\n');
          } else data += `${line}\n`;
          continue;
        }
        const verb = line.slice(0, 4).toUpperCase();
        if (verb === 'EHLO' || verb === 'HELO') socket.write('250 sink\r\n');
        else if (verb === 'DATA') {
          data = '';
          socket.write('354 go on\r\n');
        } else if (verb === 'QUIT') socket.end('221 bye\r\n');
        else if (line) socket.write('250 ok\r\n');
      }
    });
  });
  const latestCode = (to: string): string => {
    const message = messages.findLast((m) => m.includes(to));
    const code = message && /Your verification code is (\d{6})/.exec(message)?.[1];
    if (!code) throw new Error(`no code was emailed to ${to}`);
    return code;
  };
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({ server, port: (server.address() as AddressInfo).port, messages, latestCode })));
}
