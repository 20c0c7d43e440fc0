// The baseline every benchmark figure is divided by: the plainest possible node:http server,
// answering a small JSON body on the same machine, core and connection count as Placard.
import http from 'node:http';

const body = JSON.stringify({ status: 'success', message: 'hello' });
const server = http.createServer((request, response) => {
  response.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  response.end(body);
});
server.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => {
  console.log(JSON.stringify({ url: `http://127.0.0.1:${server.address().port}` }));
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
