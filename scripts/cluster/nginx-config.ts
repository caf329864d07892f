/**
 * The reference cluster's nginx configuration (docs/scaling.md explains each line). nginx runs as a
 * plain process (`nginx -p <dir> -c <dir>/nginx.conf`): every path it writes lives in `dir`.
 */
export function nginxConfig(o: { dir: string; port: number; apiPorts: number[]; mcpPorts: number[] }): string {
  const servers = (ports: number[]) => ports.map((p) => `    server 127.0.0.1:${p};`).join('\n');
  return `daemon off;
worker_processes 1;
pid ${o.dir}/nginx.pid;
error_log ${o.dir}/error.log warn;
events { worker_connections 4096; }
http {
  access_log off;
  client_body_temp_path ${o.dir}/client_body;
  proxy_temp_path ${o.dir}/proxy;
  fastcgi_temp_path ${o.dir}/fastcgi;
  uwsgi_temp_path ${o.dir}/uwsgi;
  scgi_temp_path ${o.dir}/scgi;

  # Keep-alive connections to the processes; a process that refuses a connection (it is restarting)
  # is skipped for fail_timeout and the request goes to the next one. Idle connections are closed
  # after 1 s, below the processes' SHUTDOWN_DELAY_MS: by the time a process stops accepting, nginx
  # holds no idle connection to it that could be closed under a request.
  upstream wfs_api {
${servers(o.apiPorts)}
    keepalive 64;
    keepalive_timeout 1s;
  }
  upstream wfs_mcp {
${servers(o.mcpPorts)}
    keepalive 64;
    keepalive_timeout 1s;
  }

  server {
    listen 127.0.0.1:${o.port};
    client_max_body_size 21m;
    proxy_http_version 1.1;
    proxy_set_header Connection "";
    proxy_set_header Host $http_host;
    proxy_set_header X-Request-Id $request_id;
    proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
    # Only failures before a process took the request are retried elsewhere: a POST is never replayed.
    proxy_next_upstream error timeout http_502;
    proxy_next_upstream_tries 2;

    # The MCP endpoint (/mcp and /mcp/) and its OAuth resource metadata go to the MCP processes;
    # everything else (the API, the console, /login and the OAuth authorization server) to the API.
    location /mcp {
      proxy_pass http://wfs_mcp;
      proxy_buffering off;
      proxy_read_timeout 300s;
    }
    location /.well-known/oauth-protected-resource {
      proxy_pass http://wfs_mcp;
    }
    location / {
      proxy_pass http://wfs_api;
    }
  }
}
`;
}
