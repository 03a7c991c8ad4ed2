/**
 * A secret from stdin: typed at a prompt without echo when stdin is a terminal,
 * else everything piped in (`echo "$TOKEN" | mq login --url ...`).
 */
export async function readSecret(prompt: string, input: NodeJS.ReadStream = process.stdin, output: NodeJS.WriteStream = process.stderr): Promise<string> {
  if (!input.isTTY) {
    const chunks: Buffer[] = [];
    for await (const chunk of input) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks).toString('utf8').trim();
  }
  output.write(prompt);
  input.setRawMode(true);
  input.resume();
  input.setEncoding('utf8');
  return new Promise((resolve) => {
    let typed = '';
    const finish = (value: string) => {
      input.setRawMode(false);
      input.pause();
      input.off('data', onData);
      output.write('\n');
      resolve(value);
    };
    const onData = (data: string) => {
      for (const char of data) {
        if (char === '\r' || char === '\n' || char === '\u0004') return finish(typed.trim());
        if (char === '\u0003') return finish('');
        if (char === '\u007f' || char === '\b') typed = typed.slice(0, -1);
        else typed += char;
      }
    };
    input.on('data', onData);
  });
}
