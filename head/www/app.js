/*
 * app.js -- the dashboard page's script (index.html), served at /app.js:
 * it fetches /api/cluster_status every 2 s and renders the head, the
 * cluster totals and the table of nodes. Without a valid token cookie
 * (401) it goes to /login.
 */
'use strict';
const BYTES={memory:1,object_store_memory:1};
function esc(s){return String(s).replace(/[&<>"']/g,c=>({'&':'&amp;','<':'&lt;','>':'&gt;','"':'&quot;',"'":'&#39;'})[c]);}
function bytes(b){const u=['B','KiB','MiB','GiB','TiB','PiB'];let i=0;while(b>=1024&&i<u.length-1){b/=1024;i++;}return (i?b.toFixed(1):b)+u[i];}
function amt(n,v){return BYTES[n]?bytes(v):(+v.toFixed(4)).toString();}
function bar(f){f=Math.max(0,Math.min(1,f||0));return '<span class="bar"><i style="width:'+(f*100).toFixed(0)+'%"></i></span>';}
function usage(tot,av,alive){return Object.keys(tot).sort().map(n=>{const t=tot[n],u=alive?t-(av[n]||0):0;return bar(t?u/t:0)+esc(amt(n,u)+'/'+amt(n,t)+' '+n);}).join('<br>');}
function render(s){
 const alive=s.nodes.filter(n=>n.state==='ALIVE').length;
 const up=Math.max(0,Math.round((Date.now()-s.head_start_time_ms)/1000));
 document.getElementById('meta').innerHTML='head <code>'+esc(s.head_address)+'</code> &middot; cluster <code>'+esc(s.cluster_id)+'</code> &middot; version '+esc(s.head_version)+' &middot; up '+up+'s &middot; '+alive+' alive, '+(s.nodes.length-alive)+' dead';
 let t='<tr><th>resource</th><th>used / total</th></tr>';
 const names=Object.keys(s.resources_total).sort();
 for(const n of names){const tot=s.resources_total[n],u=tot-(s.resources_available[n]||0);
  t+='<tr><td>'+esc(n)+'</td><td>'+bar(tot?u/tot:0)+esc(amt(n,u)+' / '+amt(n,tot))+'</td></tr>';}
 if(!names.length)t+='<tr><td colspan="2">(no resources)</td></tr>';
 document.getElementById('totals').innerHTML=t;
 let h='<tr><th>node</th><th>state</th><th>address</th><th>host</th><th>resources used / total</th><th>cpu</th><th>memory</th><th>gpus</th></tr>';
 for(const n of s.nodes){const a=n.state==='ALIVE',g=n.usage||{};
  h+='<tr><td><code title="'+esc(n.node_id)+'">'+esc(n.node_id.slice(0,12))+'</code></td><td class="'+esc(n.state)+'">'+esc(n.state)+(a?'':'<br><small>'+esc(n.death_reason)+'</small>')+'</td><td>'+esc(n.address)+'</td><td>'+esc(n.hostname)+'</td><td>'+usage(n.resources_total,n.resources_available,a)+'</td><td>'+(a&&g.cpu_percent!==undefined?bar(g.cpu_percent/100)+g.cpu_percent.toFixed(1)+'%':'')+'</td><td>'+(a&&g.mem_total_bytes?bar(g.mem_used_bytes/g.mem_total_bytes)+esc(bytes(g.mem_used_bytes)+' / '+bytes(g.mem_total_bytes)):'')+'</td><td>'+(a?(n.gpus||[]).map(d=>esc(d.id+': '+(d.memory_used_bytes===null?'?':bytes(d.memory_used_bytes))+' / '+(d.memory_total_bytes===null?'?':bytes(d.memory_total_bytes))+', '+(d.utilization_percent===null?'?':d.utilization_percent+'%'))).join('<br>'):'')+'</td></tr>';}
 if(!s.nodes.length)h+='<tr><td colspan="8">(no nodes)</td></tr>';
 document.getElementById('nodes').innerHTML=h;
}
async function tick(){
 try{const r=await fetch('/api/cluster_status',{cache:'no-store'});
  if(r.status===401){location.href='/login';return;}
  if(!r.ok)throw new Error('HTTP '+r.status);
  render(await r.json());document.getElementById('err').textContent='';}
 catch(e){document.getElementById('err').textContent='cannot reach the head: '+e.message;}
 setTimeout(tick,2000);
}
tick();
